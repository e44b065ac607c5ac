import SharedSession

/// The media source's de-click: fades the audio in and out over 5 ms (a pause, a resume, a seek's new
/// position), and where the audio breaks off (a seek, an underrun, the end, a gap in the file) lets the
/// last sample heard decay to zero over 5 ms instead of stepping to silence.
///
/// Two gains, each with one job: ``fadeGain`` scales the audio being played, `tailGain` scales the
/// held last sample that decays under it. Render side only; real-time safe (no allocation, no lock).
struct Declicker {
    /// Frames a fade takes from full gain to silence: 5 ms at 48 kHz.
    static let fadeFrames = AudioFormat.standard.sampleRate / 200
    /// How much a gain moves each frame.
    private static let step = 1 / Float(fadeFrames)

    /// The gain of the audio being played: ramps towards 1 while it is audible, towards 0 otherwise.
    private(set) var fadeGain: Float = 1
    private var tailLeft: Float = 0
    private var tailRight: Float = 0
    private var tailGain: Float = 0
    private var lastLeft: Float = 0
    private var lastRight: Float = 0

    /// Starts at full gain or at silence: a source paused before its first render starts silent rather
    /// than fading its start out.
    mutating func start(audible: Bool) {
        fadeGain = audible ? 1 : 0
    }

    /// Drops the audio being played to silence at once, with no tail: what plays next fades in.
    mutating func silenceFade() {
        fadeGain = 0
    }

    /// Frames the fade-out takes from where it is to silence.
    var framesToFadeOut: Int { Self.frames(toSilenceFrom: fadeGain) }

    /// Frames the tail still takes to decay to silence; 0 when there is none.
    var framesToDecay: Int { tailGain > 0 ? Self.frames(toSilenceFrom: tailGain) : 0 }

    /// Frames a fade at `gain` takes to reach zero (a hair under, so float rounding never adds a frame).
    @inline(__always)
    private static func frames(toSilenceFrom gain: Float) -> Int {
        max(0, Int((gain / step - 1e-3).rounded(.up)))
    }

    /// The last sample heard becomes a tail that decays to zero, and new audio fades in from zero.
    @inline(__always)
    mutating func beginDiscontinuity() {
        tailLeft = lastLeft
        tailRight = lastRight
        // From silence there is no step to smooth.
        tailGain = abs(lastLeft) + abs(lastRight) > 1e-6 ? 1 : 0
        fadeGain = 0
    }

    /// Applies the fade (towards 1 while `audible`, towards 0 otherwise) to `frames` interleaved stereo
    /// frames in place, and adds the decaying tail.
    @inline(__always)
    mutating func shape(_ samples: UnsafeMutablePointer<Float>, frames: Int, audible: Bool) {
        guard frames > 0 else { return }
        let target: Float = audible ? 1 : 0
        if fadeGain == target, tailGain == 0, target == 1 {
            lastLeft = samples[(frames &- 1) &* 2]
            lastRight = samples[(frames &- 1) &* 2 &+ 1]
            return
        }
        let step = Self.step
        var fadeGain = self.fadeGain
        var tailGain = self.tailGain
        let tailLeft = self.tailLeft
        let tailRight = self.tailRight
        var left: Float = 0
        var right: Float = 0
        var index = 0
        for _ in 0..<frames {
            if fadeGain < target {
                fadeGain += step
                if fadeGain > target - 1e-4 { fadeGain = target }
            } else if fadeGain > target {
                fadeGain -= step
                if fadeGain < target + 1e-4 { fadeGain = target }
            }
            left = samples[index] * fadeGain + tailLeft * tailGain
            right = samples[index &+ 1] * fadeGain + tailRight * tailGain
            if tailGain > 0 {
                tailGain -= step
                if tailGain < 1e-4 { tailGain = 0 }
            }
            samples[index] = left
            samples[index &+ 1] = right
            index &+= 2
        }
        self.fadeGain = fadeGain
        self.tailGain = tailGain
        lastLeft = left
        lastRight = right
    }

    /// Writes `frames` frames of the decaying tail, then zeros.
    @inline(__always)
    mutating func writeSilence(_ samples: UnsafeMutablePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        if tailGain == 0 {
            samples.update(repeating: 0, count: frames &* 2)
            lastLeft = 0
            lastRight = 0
            return
        }
        let step = Self.step
        var tailGain = self.tailGain
        var index = 0
        for _ in 0..<frames {
            samples[index] = tailLeft * tailGain
            samples[index &+ 1] = tailRight * tailGain
            if tailGain > 0 {
                tailGain -= step
                if tailGain < 1e-4 { tailGain = 0 }
            }
            index &+= 2
        }
        self.tailGain = tailGain
        lastLeft = samples[(frames &- 1) &* 2]
        lastRight = samples[(frames &- 1) &* 2 &+ 1]
    }
}
