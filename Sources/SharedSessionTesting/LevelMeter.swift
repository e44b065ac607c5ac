public import SharedSession

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Levels measured in interleaved audio, as a person with a meter would take them: for tests that
/// assert on what a listener hears rather than on the gains the code meant to apply.
///
/// A meter reads one channel of interleaved samples (the left one unless told otherwise) in frames
/// of `AudioFormat.standard` by default. Every level is in dBFS: 0 dB is a full-scale square wave's
/// RMS, a full-scale sine's peak and a full-scale sine's ``toneLevel(_:frequency:frames:)``; digital
/// silence reads ``silence``. Ranges are in frames, so a position found in one call (a ramp's end, a
/// recording's mark) is the start of the next.
///
/// ```swift
/// let meter = LevelMeter()
/// let stem = try engine.render(duration: .milliseconds(600)).stem(main)      // throws if it is missing
/// #expect(abs(try meter.rms(stem, lastMilliseconds: 100) - (-29.03)) <= 0.1)   // a 0.5 sine ducked 20 dB
/// #expect(try meter.largestStep(stem) < 0.07)                                   // no click
/// ```
///
/// A measurement never passes on nothing: every measuring method throws a ``MeasurementError`` when
/// the audio holds no frame, or when the frames asked for are empty or reach outside the audio
/// (``MeasurementError/Code/noAudio``, ``MeasurementError/Code/rangeOutsideAudio``), so a stem that
/// went missing or came back short fails the test instead of reading as silent or click-free.
public struct LevelMeter: Sendable, Hashable {
    /// The level reported for digital silence (and the floor of every level): −180 dBFS.
    public static let silence: Double = -180

    /// Frames per second of the audio measured.
    public var sampleRate: Int
    /// Samples per frame of the interleaved audio measured.
    public var channels: Int
    /// The channel measured, from 0.
    public var channel: Int

    /// A meter for interleaved audio of `channels` channels at `sampleRate`, reading `channel`.
    /// The defaults are the engines' format, `AudioFormat.standard` (48 kHz stereo), left channel.
    public init(
        sampleRate: Int = AudioFormat.standard.sampleRate, channels: Int = AudioFormat.standard.channels,
        channel: Int = 0
    ) {
        self.sampleRate = sampleRate
        self.channels = max(channels, 1)
        self.channel = min(max(channel, 0), max(channels, 1) - 1)
    }

    // MARK: units

    /// 20·log10 of a linear amplitude, floored at ``silence``.
    public static func decibels(_ amplitude: Double) -> Double {
        max(20 * log10(Swift.max(abs(amplitude), 1e-9)), silence)
    }

    /// The linear amplitude of a level in dB.
    public static func amplitude(decibels: Double) -> Double { pow(10, decibels / 20) }

    /// Whole frames in `samples`.
    public func frameCount(_ samples: [Float]) -> Int { samples.count / channels }

    /// Frames in `milliseconds` at the meter's sample rate (rounded down).
    public func frames(milliseconds: Double) -> Int { Int(milliseconds * Double(sampleRate) / 1000) }

    /// Milliseconds that `frames` last at the meter's sample rate.
    public func milliseconds(frames: Int) -> Double { Double(frames) * 1000 / Double(sampleRate) }

    /// The frames of `samples` that `frames` names, clamped to what is there (all of them for nil).
    public func clamp(_ frames: Range<Int>?, in samples: [Float]) -> Range<Int> {
        let all = 0..<frameCount(samples)
        guard let frames else { return all }
        return frames.clamped(to: all)
    }

    /// The last `milliseconds` of `samples`, as a frame range.
    public func last(milliseconds: Double, of samples: [Float]) -> Range<Int> {
        let count = frameCount(samples)
        return max(0, count - frames(milliseconds: milliseconds))..<count
    }

    // MARK: levels

    /// The frames a measurement reads: all of `samples` for nil, else `frames`, which must lie within
    /// them. Throws rather than measure nothing.
    public func measured(_ frames: Range<Int>?, in samples: [Float]) throws(MeasurementError) -> Range<Int> {
        let all = 0..<frameCount(samples)
        guard !all.isEmpty else {
            throw MeasurementError(
                code: .noAudio,
                message: "the audio holds no frame (\(samples.count) samples of \(channels) channels): a missing or "
                    + "empty stem; check that the stream was open and the engine rendered")
        }
        guard let frames else { return all }
        guard !frames.isEmpty, frames.lowerBound >= 0, frames.upperBound <= all.upperBound else {
            throw MeasurementError(
                code: .rangeOutsideAudio,
                message: "frames \(frames) are empty or reach outside the audio's \(all.count) frames; "
                    + "render longer or measure a range inside what was rendered")
        }
        return frames
    }

    /// The RMS amplitude (linear, 0…1 for in-range audio) of the measured channel over `frames`.
    ///
    /// - Throws: ``MeasurementError`` for audio with no frame or a range that is empty or reaches outside it.
    public func rmsAmplitude(_ samples: [Float], frames: Range<Int>? = nil) throws(MeasurementError) -> Double {
        let range = try measured(frames, in: samples)
        var sum = 0.0
        for frame in range {
            let value = Double(samples[frame &* channels &+ channel])
            sum += value * value
        }
        return (sum / Double(range.count)).squareRoot()
    }

    /// The RMS level in dBFS of the measured channel over `frames` (a 0.5 sine: −9.03 dBFS).
    public func rms(_ samples: [Float], frames: Range<Int>? = nil) throws(MeasurementError) -> Double {
        Self.decibels(try rmsAmplitude(samples, frames: frames))
    }

    /// The RMS level in dBFS of the last `milliseconds` of `samples`, which must hold that much.
    public func rms(_ samples: [Float], lastMilliseconds milliseconds: Double) throws(MeasurementError) -> Double {
        let count = frameCount(samples)
        return try rms(samples, frames: (count - frames(milliseconds: milliseconds))..<count)
    }

    /// The largest absolute sample (linear) of the measured channel over `frames`.
    public func peakAmplitude(_ samples: [Float], frames: Range<Int>? = nil) throws(MeasurementError) -> Double {
        var peak: Float = 0
        for frame in try measured(frames, in: samples) { peak = max(peak, abs(samples[frame &* channels &+ channel])) }
        return Double(peak)
    }

    /// The peak level in dBFS of the measured channel over `frames` (a 0.5 sine: −6.02 dBFS).
    public func peak(_ samples: [Float], frames: Range<Int>? = nil) throws(MeasurementError) -> Double {
        Self.decibels(try peakAmplitude(samples, frames: frames))
    }

    /// The level in dBFS of the `frequency` component of the measured channel over `frames`, by the
    /// Goertzel algorithm: the amplitude of that sine (a full-scale sine is 0 dB, a 0.5 sine −6.02 dB),
    /// blind to other tones. Exact for windows that hold whole cycles of `frequency` (10 ms holds 10
    /// cycles of 1 kHz); other tones leak into it unless the window holds whole cycles of them too.
    public func toneLevel(
        _ samples: [Float], frequency: Double, frames: Range<Int>? = nil
    ) throws(MeasurementError) -> Double {
        let range = try measured(frames, in: samples)
        return Self.decibels(toneAmplitude(samples, frequency: frequency, channel: channel, frames: range))
    }

    /// The amplitude of the `frequency` sine in `channel` over `range` (not empty), by the Goertzel
    /// algorithm, each sample weighted by `window` and the sum divided by the weights' sum (the
    /// window's coherent gain), so a steady sine reads its amplitude under either window.
    private func toneAmplitude(
        _ samples: [Float], frequency: Double, channel: Int, frames range: Range<Int>,
        window: Window = .rectangular
    ) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(sampleRate))
        let count = Double(range.count)
        var s1 = 0.0
        var s2 = 0.0
        var weights = 0.0
        for (index, frame) in range.enumerated() {
            let weight: Double
            switch window {
            case .rectangular: weight = 1
            case .hann: weight = 0.5 - 0.5 * cos(2 * Double.pi * Double(index) / count)
            }
            weights += weight
            let s = weight * Double(samples[frame &* channels &+ channel]) + coefficient * s1 - s2
            s2 = s1
            s1 = s
        }
        guard weights > 0 else { return 0 }
        return 2 * max(0, s1 * s1 + s2 * s2 - coefficient * s1 * s2).squareRoot() / weights
    }

    /// The RMS level in dBFS over `frames` of every channel together (every interleaved sample, as
    /// sox's "RMS lev dB" reads a file): for audio whose channels differ, such as a decoded soundtrack.
    public func rmsOfAllChannels(_ samples: [Float], frames: Range<Int>? = nil) throws(MeasurementError) -> Double {
        let range = try measured(frames, in: samples)
        var sum = 0.0
        for index in (range.lowerBound &* channels)..<(range.upperBound &* channels) {
            let value = Double(samples[index])
            sum += value * value
        }
        return Self.decibels((sum / Double(range.count &* channels)).squareRoot())
    }

    /// How a window of samples is weighted before a partial is read out of it.
    public enum Window: Sendable, Hashable {
        /// Every sample counts the same. Exact, and blind to other tones, when the window holds whole
        /// cycles of every tone present. A tone whose level changes inside the window (a syllable, a
        /// decay) spreads into its neighbours: a 600 Hz tone that swells three times a second reads
        /// up to 40 dB under its own level at 220 and 330 Hz over 100 ms.
        case rectangular
        /// A Hann window: a steady partial still reads exactly (the sum is divided by the window's
        /// coherent gain), and that swelling tone reads 100 dB under its own level at 220 and 330 Hz.
        /// For reading one stream out of a mix of moving ones.
        case hann
    }

    /// The RMS level in dBFS of only the sine partials at `frequencies` over `frames`, averaged over
    /// every channel: one voice read out of a mix, as long as the voices sit at different frequencies.
    /// Each partial's amplitude A comes from a Goertzel filter over the samples weighted by `window`
    /// and adds A²/2 of power; over a window that holds whole cycles of every steady tone present,
    /// other partials add nothing (see ``Window`` for tones that are not steady). No frequencies:
    /// ``silence``.
    public func partialsLevel(
        _ samples: [Float], frequencies: [Double], frames: Range<Int>? = nil, window: Window = .rectangular
    ) throws(MeasurementError) -> Double {
        let range = try measured(frames, in: samples)
        guard !frequencies.isEmpty else { return Self.silence }
        var power = 0.0
        for channel in 0..<channels {
            for frequency in frequencies {
                let amplitude = toneAmplitude(
                    samples, frequency: frequency, channel: channel, frames: range, window: window)
                power += amplitude * amplitude / 2
            }
        }
        return Self.decibels((power / Double(channels)).squareRoot())
    }

    /// The ``toneLevel(_:frequency:frames:)`` of consecutive windows of `window` frames, one every
    /// `hop` frames, over `frames`: a level-against-time curve. Each element is the window's first
    /// frame and its level.
    ///
    /// - Throws: ``MeasurementError`` also when `window` or `hop` is not positive or `frames` holds
    ///   less than one window: a curve of no point would pass any check on its points.
    public func toneLevels(
        _ samples: [Float], frequency: Double, window: Int, hop: Int, frames: Range<Int>? = nil
    ) throws(MeasurementError) -> [(frame: Int, level: Double)] {
        let range = try measured(frames, in: samples)
        guard window > 0, hop > 0, range.count >= window else {
            throw MeasurementError(
                code: .rangeOutsideAudio,
                message: "windows of \(window) frames every \(hop) do not fit in frames \(range); "
                    + "give a positive window and hop and at least one window of audio")
        }
        var levels: [(frame: Int, level: Double)] = []
        for start in stride(from: range.lowerBound, through: range.upperBound - window, by: hop) {
            levels.append((start, try toneLevel(samples, frequency: frequency, frames: start..<(start + window))))
        }
        return levels
    }

    /// Whether every sample of every channel over `frames` is exactly 0: digital silence, not just
    /// quiet. No audio is not silence: it throws.
    public func isSilent(_ samples: [Float], frames: Range<Int>? = nil) throws(MeasurementError) -> Bool {
        let range = try measured(frames, in: samples)
        return samples[(range.lowerBound &* channels)..<(range.upperBound &* channels)].allSatisfy { $0 == 0 }
    }

    // MARK: clicks and edges

    /// The largest difference between consecutive samples of the measured channel over `frames`. A
    /// sine of amplitude A at f Hz never steps more than 2πfA/sampleRate, so a gap, a jump or an
    /// unramped gain change shows as a larger step. One frame has no step: it throws, as no audio does.
    public func largestStep(_ samples: [Float], frames: Range<Int>? = nil) throws(MeasurementError) -> Float {
        let range = try measured(frames, in: samples)
        guard range.count > 1 else {
            throw MeasurementError(
                code: .rangeOutsideAudio,
                message: "a step needs two frames, frames \(range) hold one; measure a longer range")
        }
        var largest: Float = 0
        for frame in (range.lowerBound + 1)..<range.upperBound {
            largest = max(
                largest, abs(samples[frame &* channels &+ channel] - samples[(frame &- 1) &* channels &+ channel]))
        }
        return largest
    }

    /// The first frame in `frames` whose sample is at or below `threshold`, if any.
    public func firstFrame(
        _ samples: [Float], atOrBelow threshold: Float, frames: Range<Int>? = nil
    ) throws(MeasurementError) -> Int? {
        try measured(frames, in: samples).first { samples[$0 &* channels &+ channel] <= threshold }
    }

    /// The first frame in `frames` whose sample is at or above `threshold`, if any.
    public func firstFrame(
        _ samples: [Float], atOrAbove threshold: Float, frames: Range<Int>? = nil
    ) throws(MeasurementError) -> Int? {
        try measured(frames, in: samples).first { samples[$0 &* channels &+ channel] >= threshold }
    }

    /// The end of the first window of `window` frames (stepping `hop` frames) in `frames` where the
    /// `frequency` tone is at or below `threshold` dBFS: when a fade down is heard to reach a level.
    /// Nil if no window does.
    public func firstWindowEnd(
        _ samples: [Float], frequency: Double, atOrBelow threshold: Double, window: Int = 480, hop: Int = 48,
        frames: Range<Int>? = nil
    ) throws(MeasurementError) -> Int? {
        try toneLevels(samples, frequency: frequency, window: window, hop: hop, frames: frames)
            .first { $0.level <= threshold }.map { $0.frame + window }
    }

    /// The end of the first window of `window` frames (stepping `hop` frames) in `frames` where the
    /// `frequency` tone is at or above `threshold` dBFS: when a fade up or a start is heard. Nil if no
    /// window does.
    public func firstWindowEnd(
        _ samples: [Float], frequency: Double, atOrAbove threshold: Double, window: Int = 480, hop: Int = 48,
        frames: Range<Int>? = nil
    ) throws(MeasurementError) -> Int? {
        try toneLevels(samples, frequency: frequency, window: window, hop: hop, frames: frames)
            .first { $0.level >= threshold }.map { $0.frame + window }
    }
}
