import Synchronization

/// The real-time render kernel of one stream: pulls its source, ramps its gain per sample, and
/// writes or adds the result to an output buffer.
///
/// Both engines use it: the offline engine mixes several into one buffer, the PipeWire engine runs
/// one per `pw_stream` in that stream's process callback. The control side (``setGain(_:rampFrames:)``,
/// ``setPaused(_:)``) publishes through atomics; the render side (``render(into:frames:accumulate:suspended:)``)
/// reads them once per call and keeps the rest in plain stored properties that only it touches.
///
/// The render side never locks, allocates, logs or makes a system call; a test counts it.
///
/// A gain change that arrives while the stream is silent (paused or suspended, its de-click fade
/// finished) is applied as a step: nothing can be heard, so the stream resumes at its target instead
/// of ramping there audibly from an old level.
public final class StreamRenderer: StreamControl, @unchecked Sendable {
    // @unchecked: the `var` properties below the "render side" mark are read and written only by
    // the render thread (one at a time, as the engines guarantee); the control side reaches the render
    // side only through the atomics, and the scratch pointer is touched only by the render side.

    /// The stream's source.
    public let source: any AudioSource
    /// The format the stream renders.
    public let format: AudioFormat
    /// Interleaved channels per frame.
    public let channels: Int
    /// Frames over which a pause or resume fades out or in, so neither clicks (5 ms at 48 kHz).
    public let declickFrames: Int

    private let scratch: UnsafeMutablePointer<Float>
    private let scratchFrames: Int

    // Control side to render side.
    private let targetGainBits: Atomic<UInt32>
    private let rampFrameCount = Atomic<Int>(0)
    private let gainGeneration = Atomic<UInt64>(0)
    private let pausedFlag: Atomic<Bool>

    // Render side to control side.
    private let currentGainBits: Atomic<UInt32>
    private let pulledFrames = Atomic<Int>(0)
    private let silentFrames = Atomic<Int>(0)
    private let audibleFlag: Atomic<Bool>

    // Render side only.
    private var gain: Float
    private var target: Float
    // A ramp is computed from its start, not accumulated sample by sample, so it never overshoots.
    private var rampStart: Float = 0
    private var rampLength = 0
    private var rampPosition = 0
    private var seenGeneration: UInt64 = 0
    private var runGain: Float

    /// Creates the kernel for a stream that starts at `gain`, paused or playing.
    public init(source: any AudioSource, gain: Float, paused: Bool, format: AudioFormat = .standard) {
        self.source = source
        self.format = format
        self.channels = format.channels
        self.declickFrames = max(1, format.sampleRate / 200)
        self.scratchFrames = 1024
        self.scratch = .allocate(capacity: 1024 * format.channels)
        self.scratch.initialize(repeating: 0, count: 1024 * format.channels)
        self.targetGainBits = Atomic(gain.bitPattern)
        self.currentGainBits = Atomic(gain.bitPattern)
        self.pausedFlag = Atomic(paused)
        self.audibleFlag = Atomic(!paused)
        self.gain = gain
        self.target = gain
        self.runGain = paused ? 0 : 1
    }

    deinit {
        scratch.deallocate()
    }

    // MARK: Control side

    /// Starts a linear ramp from wherever the gain is now to `gain` over `rampFrames` frames
    /// (0: a step at the next frame). A ramp in progress is replaced, continuing from the level reached.
    public func setGain(_ gain: Float, rampFrames: Int) {
        targetGainBits.store(gain.bitPattern, ordering: .relaxed)
        rampFrameCount.store(max(0, rampFrames), ordering: .relaxed)
        gainGeneration.add(1, ordering: .releasing)
    }

    /// Starts a linear ramp to `gain` over `ramp`, converted to frames at the stream's rate.
    public func setGain(_ gain: Float, ramp: Duration) {
        setGain(gain, rampFrames: format.frames(in: ramp))
    }

    /// Pauses (fading out over ``declickFrames`` and then no longer pulling the source, so playback
    /// resumes where it stopped) or resumes.
    public func setPaused(_ paused: Bool) {
        pausedFlag.store(paused, ordering: .releasing)
    }

    /// The gain the render side reached at the end of its last call.
    public var currentGain: Float { Float(bitPattern: currentGainBits.load(ordering: .relaxed)) }

    /// The gain the last ``setGain(_:rampFrames:)`` asked for.
    public var targetGain: Float { Float(bitPattern: targetGainBits.load(ordering: .relaxed)) }

    /// Whether the stream is paused by its control side.
    public var isPaused: Bool { pausedFlag.load(ordering: .relaxed) }

    /// Whether the last render call produced sound-carrying frames (not paused, not suspended, or
    /// still fading out).
    public var isAudible: Bool { audibleFlag.load(ordering: .relaxed) }

    /// Frames pulled from the source so far.
    public var framesPulled: Int { pulledFrames.load(ordering: .relaxed) }

    /// Frames the source could not deliver while the stream was playing (it ran dry or ended).
    public var framesMissing: Int { silentFrames.load(ordering: .relaxed) }

    // MARK: Render side

    /// Renders `frames` frames into `output`, adding to what is there when `accumulate` is true and
    /// overwriting it otherwise. `suspended` silences the stream the way a pause does (an engine-wide
    /// interruption or suspend). Any frame count works; long requests are rendered in chunks.
    public func render(into output: UnsafeMutablePointer<Float>, frames: Int, accumulate: Bool, suspended: Bool) {
        let generation = gainGeneration.load(ordering: .acquiring)
        if generation != seenGeneration {
            seenGeneration = generation
            target = Float(bitPattern: targetGainBits.load(ordering: .relaxed))
            let length = rampFrameCount.load(ordering: .relaxed)
            rampStart = gain
            rampLength = length
            rampPosition = 0
            if length == 0 { gain = target }
        }
        // Silent since the last call: whatever is left of a ramp could not be heard, so it ends now
        // and the stream fades in at its target.
        if runGain == 0, rampPosition < rampLength {
            rampPosition = rampLength
            gain = target
        }
        let playing = !suspended && !pausedFlag.load(ordering: .acquiring)
        var done = 0
        while done < frames {
            let chunk = min(frames &- done, scratchFrames)
            renderChunk(into: output + done &* channels, frames: chunk, accumulate: accumulate, playing: playing)
            done = done &+ chunk
        }
        currentGainBits.store(gain.bitPattern, ordering: .relaxed)
        audibleFlag.store(playing || runGain > 0, ordering: .relaxed)
    }

    @inline(__always)
    private func renderChunk(
        into output: UnsafeMutablePointer<Float>, frames: Int, accumulate: Bool, playing: Bool
    ) {
        let runStep = 1 / Float(declickFrames)
        // Pull only the frames that will be heard: all of them while playing, and while fading out
        // only up to the frame where the fade reaches zero, so a resume continues from there.
        let wanted: Int
        if playing {
            wanted = frames
        } else {
            wanted = min(frames, Int((runGain / runStep).rounded(.up)))
        }
        var pulled = 0
        if wanted > 0 {
            pulled = max(0, min(wanted, source.render(into: scratch, frames: wanted)))
            pulledFrames.add(pulled, ordering: .relaxed)
            if pulled < wanted, playing {
                silentFrames.add(wanted &- pulled, ordering: .relaxed)
            }
        }
        if pulled < frames {
            (scratch + pulled &* channels).update(repeating: 0, count: (frames &- pulled) &* channels)
        }

        var gain = self.gain
        var runGain = self.runGain
        var rampPosition = self.rampPosition
        let rampLength = self.rampLength
        let rampStart = self.rampStart
        let rampSpan = target - rampStart
        let inverseLength = rampLength > 0 ? 1 / Float(rampLength) : 0
        let target = self.target
        let channels = self.channels
        var index = 0
        for _ in 0..<frames {
            if rampPosition < rampLength {
                rampPosition &+= 1
                gain =
                    rampPosition == rampLength ? target : rampStart + rampSpan * (Float(rampPosition) * inverseLength)
            }
            if playing {
                if runGain < 1 { runGain = min(1, runGain + runStep) }
            } else if runGain > 0 {
                runGain = max(0, runGain - runStep)
            }
            let factor = gain * runGain
            for _ in 0..<channels {
                let value = scratch[index] * factor
                output[index] = accumulate ? output[index] + value : value
                index &+= 1
            }
        }
        self.gain = gain
        self.runGain = runGain
        self.rampPosition = rampPosition
    }
}
