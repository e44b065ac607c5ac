/// The stream's own gain as the render side applies it, the first stage of ``StreamRenderer``: a
/// linear ramp to the gain last asked for, and the de-click fade that opens when the stream plays and
/// closes when it is paused or suspended, so neither clicks.
///
/// A ramp is computed from its start, not accumulated sample by sample, so it never overshoots. A
/// value type the renderer copies into its loop and back: no lock, no allocation.
struct GainRamp {
    /// The gain reached.
    private(set) var gain: Float
    /// The gain the ramp goes to.
    private(set) var target: Float
    private var start: Float = 0
    private var span: Float = 0
    private var length = 0
    private var position = 0
    private var inverseLength: Float = 0
    /// The de-click fade: 0 silent (faded out), 1 open.
    private(set) var declick: Float
    /// How far the fade moves a frame: its length is ``StreamRenderer/declickFrames``.
    let declickStep: Float

    /// A stream at `gain`, its fade open if it plays and closed if not.
    init(gain: Float, playing: Bool, declickFrames: Int) {
        self.gain = gain
        target = gain
        declick = playing ? 1 : 0
        declickStep = 1 / Float(declickFrames)
    }

    /// Whether a ramp is under way.
    var isRamping: Bool { position < length }

    /// Whether the fade is closed: nothing the stream renders can be heard.
    var isSilent: Bool { declick == 0 }

    /// Whether nothing moves: no ramp, the fade open. The renderer then applies one constant factor.
    var isSteady: Bool { declick >= 1 && position >= length }

    /// Starts a ramp from the gain reached to `target` over `frames` frames (0: a step now).
    mutating func ramp(to target: Float, frames: Int) {
        self.target = target
        start = gain
        span = target - gain
        length = frames
        position = 0
        inverseLength = frames > 0 ? 1 / Float(frames) : 0
        if frames == 0 { gain = target }
    }

    /// Ends a ramp at its target at once: for a stream whose fade is closed, where it cannot be heard.
    mutating func skipRampIfSilent() {
        guard isSilent, isRamping else { return }
        position = length
        gain = target
    }

    /// The frames worth pulling from the source out of `frames`: all while playing; while fading out,
    /// only those up to where the fade closes, so a resume continues from there.
    func framesHeard(of frames: Int, playing: Bool) -> Int {
        playing ? frames : min(frames, Int((declick / declickStep).rounded(.up)))
    }

    /// Moves one frame on: the ramp, then the fade (opening while `playing`, closing otherwise).
    /// Returns the gain at this frame; ``declick`` is the fade's.
    @inline(__always)
    mutating func advance(playing: Bool) -> Float {
        if position < length {
            position &+= 1
            gain = position == length ? target : start + span * (Float(position) * inverseLength)
        }
        if playing {
            if declick < 1 { declick = min(1, declick + declickStep) }
        } else if declick > 0 {
            declick = max(0, declick - declickStep)
        }
        return gain
    }
}
