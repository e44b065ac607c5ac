#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Loudness as ITU-R BS.1770-4 defines it, in LUFS: momentary (400 ms), short-term (3 s) and
/// integrated (gated) loudness of interleaved audio, checked against EBU Tech 3341's test signals.
///
/// The signal of each channel is K-weighted (BS.1770's shelving pre-filter and RLB high-pass: the
/// standard's own coefficients at 48 kHz; at another rate, the same filters designed for it from
/// their analogue prototypes, as libebur128 does), squared and summed per 100 ms step with the channel's
/// weight (1 for left, right and centre; 1.41 for the surrounds; 0 for an LFE), so
/// - momentary loudness is the last 400 ms (4 steps), short-term the last 3 s (30 steps), both
///   counting silence before the first sample, as a meter that has just been switched on does;
/// - integrated loudness gates 400 ms blocks overlapping by 75 %: blocks under −70 LUFS are dropped
///   (the absolute gate), then blocks more than 10 LU under the loudness of those left (the relative
///   gate), and the rest are averaged in energy.
///
/// `L = −0.691 + 10 log10(Σ weight × mean square)`: a stereo 1 kHz sine at −23 dBFS on each channel
/// reads −23.0 LUFS.
///
/// ## Real time
/// ``add(_:frames:)`` is real-time safe: it filters and sums into buffers made by the initialiser, and
/// never allocates, locks or calls anything that might; the integrated loudness is kept as a
/// histogram of block energies (10,000 bins of 0.01 LU from −70 to +30 LUFS, each with its count and
/// exact energy sum), so gating needs no list of blocks. One thread at a time adds and reads.
public final class LoudnessMeter {
    /// The sample rate BS.1770 gives the K-weighting coefficients for.
    public static let standardSampleRate = 48_000
    /// The sample rate the meter measures at.
    public let sampleRate: Int
    /// Frames in one 100 ms step.
    let stepFrames: Int
    /// Steps kept: the short-term window.
    static let shortTermSteps = 30
    /// Steps in the momentary window.
    static let momentarySteps = 4
    /// The absolute gate, in LUFS.
    public static let absoluteGate = -70.0
    /// The relative gate, in LU under the absolute-gated loudness.
    public static let relativeGate = -10.0
    private static let histogramBins = 10_000
    private static let histogramFloor = -70.0
    private static let histogramStep = 0.01

    /// The weight of each channel of the interleaved input.
    public let channelWeights: [Double]
    /// Interleaved channels per frame: `channelWeights.count`.
    public let channels: Int

    /// K-weighting: a high shelf, then a high-pass.
    private let shelf: Biquad
    private let highPass: Biquad

    /// Per channel: the two biquads' states (direct form II transposed), and the step's sum of squares.
    private let state: UnsafeMutablePointer<Double>
    private let weights: UnsafeMutablePointer<Double>
    private var stepSum: Double = 0
    private var stepFill = 0
    /// The weighted mean squares of the last steps, a ring.
    private let steps: UnsafeMutablePointer<Double>
    private var stepIndex = 0
    private var stepsDone = 0
    /// Gating blocks by loudness: counts and energy sums.
    private let histogramCounts: UnsafeMutablePointer<Int>?
    private let histogramEnergy: UnsafeMutablePointer<Double>?

    /// A meter for interleaved input of `channelWeights.count` channels, each weighted as given
    /// (stereo: `[1, 1]`; 5.0: `[1, 1, 1, 1.41, 1.41]` for L R C Ls Rs; an LFE is 0), at `sampleRate`.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` for no channels, more than 16, a weight
    ///   that is negative or not finite, or a sample rate outside 8,000 through 384,000 Hz, naming it.
    public convenience init(channelWeights: [Double] = [1, 1], sampleRate: Int = 48_000) throws(SessionError) {
        try self.init(channelWeights: channelWeights, sampleRate: sampleRate, integrates: true)
    }

    /// A meter that keeps the gating histogram only if `integrates` (a meter of momentary and
    /// short-term loudness alone, as a loudness duck keeps, needs a few hundred bytes, not 160 KB).
    init(channelWeights: [Double], sampleRate: Int, integrates: Bool) throws(SessionError) {
        guard (1...16).contains(channelWeights.count) else {
            throw .invalidValue(
                "loudness meter channel count", Double(channelWeights.count), fix: "meter 1 through 16 channels")
        }
        for weight in channelWeights where !weight.isFinite || weight < 0 {
            throw .invalidValue(
                "loudness meter channel weight", weight, fix: "give weights of 0 or more (1, or 1.41 for a surround)")
        }
        guard (8_000...384_000).contains(sampleRate) else {
            throw .invalidValue(
                "loudness meter sample rate (Hz)", Double(sampleRate), fix: "meter audio at 8,000 through 384,000 Hz")
        }
        self.channelWeights = channelWeights
        self.sampleRate = sampleRate
        stepFrames = sampleRate / 10
        (shelf, highPass) = Biquad.kWeighting(sampleRate: sampleRate)
        channels = channelWeights.count
        state = .allocate(capacity: channels * 4)
        state.initialize(repeating: 0, count: channels * 4)
        weights = .allocate(capacity: channels)
        weights.initialize(from: channelWeights, count: channels)
        steps = .allocate(capacity: Self.shortTermSteps)
        steps.initialize(repeating: 0, count: Self.shortTermSteps)
        if integrates {
            histogramCounts = .allocate(capacity: Self.histogramBins)
            histogramCounts?.initialize(repeating: 0, count: Self.histogramBins)
            histogramEnergy = .allocate(capacity: Self.histogramBins)
            histogramEnergy?.initialize(repeating: 0, count: Self.histogramBins)
        } else {
            histogramCounts = nil
            histogramEnergy = nil
        }
    }

    deinit {
        state.deallocate()
        weights.deallocate()
        steps.deallocate()
        histogramCounts?.deallocate()
        histogramEnergy?.deallocate()
    }

    /// Measures `frames` interleaved frames. Real-time safe.
    public func add(_ samples: UnsafePointer<Float>, frames: Int) {
        var done = 0
        while done < frames { done &+= addUntilStep(samples + done &* channels, frames: frames &- done) }
    }

    /// Measures the first of `frames` interleaved frames up to the end of the 100 ms step in
    /// progress, and returns how many it measured: all of them, or fewer when a step completed (the
    /// caller reads the windows, then goes on from there). Real-time safe.
    @inline(__always)
    func addUntilStep(_ samples: UnsafePointer<Float>, frames: Int) -> Int {
        let channels = self.channels
        let shelf = self.shelf
        let highPass = self.highPass
        let count = min(frames, stepFrames &- stepFill)
        var sum = 0.0
        for channel in 0..<channels {
            let weight = weights[channel]
            let filter = state + channel &* 4
            var s1 = filter[0], s2 = filter[1], h1 = filter[2], h2 = filter[3]
            var squares = 0.0
            var index = channel
            for _ in 0..<count {
                let x = Double(samples[index])
                let y = shelf.b0 * x + s1
                s1 = shelf.b1 * x - shelf.a1 * y + s2
                s2 = shelf.b2 * x - shelf.a2 * y
                let z = highPass.b0 * y + h1
                h1 = highPass.b1 * y - highPass.a1 * z + h2
                h2 = highPass.b2 * y - highPass.a2 * z
                squares += z * z
                index &+= channels
            }
            filter[0] = s1
            filter[1] = s2
            filter[2] = h1
            filter[3] = h2
            sum += weight * squares
        }
        stepSum += sum
        stepFill &+= count
        if stepFill == stepFrames { finishStep() }
        return count
    }

    /// Whether the last ``addUntilStep(_:frames:)`` completed a step.
    var stepJustCompleted: Bool { stepFill == 0 && stepsDone > 0 }

    /// A 100 ms step is complete: it enters the windows, and the 400 ms block it ends is gated.
    private func finishStep() {
        steps[stepIndex] = stepSum / Double(stepFrames)
        stepIndex = (stepIndex &+ 1) % Self.shortTermSteps
        stepsDone &+= 1
        stepSum = 0
        stepFill = 0
        guard stepsDone >= Self.momentarySteps, let histogramCounts, let histogramEnergy else { return }
        let energy = mean(ofLast: Self.momentarySteps)
        let loudness = Self.loudness(energy)
        guard loudness > Self.absoluteGate else { return }
        let bin = min(Self.histogramBins - 1, Int((loudness - Self.histogramFloor) / Self.histogramStep))
        histogramCounts[bin] &+= 1
        histogramEnergy[bin] += energy
    }

    /// The 100 ms steps measured since the meter was made or reset.
    var stepsMeasured: Int { stepsDone }

    /// The mean weighted square of the last `count` steps (1 through 30), silence before the first.
    func mean(ofLast count: Int) -> Double {
        var sum = 0.0
        for back in 1...count {
            sum += steps[(stepIndex &- back &+ Self.shortTermSteps) % Self.shortTermSteps]
        }
        return sum / Double(count)
    }

    /// LUFS of a weighted mean square; −∞ for silence.
    static func loudness(_ energy: Double) -> Double {
        energy > 0 ? -0.691 + 10 * log10(energy) : -.infinity
    }

    /// The loudness of the last 400 ms, in LUFS (the steps completed; −∞ before any sound).
    public var momentary: Double { Self.loudness(mean(ofLast: Self.momentarySteps)) }

    /// The loudness of the last 3 s, in LUFS.
    public var shortTerm: Double { Self.loudness(mean(ofLast: Self.shortTermSteps)) }

    /// The gated loudness of everything measured, in LUFS; −∞ while no block passes the gates (and
    /// always for a meter made without its histogram).
    public var integrated: Double {
        guard let histogramCounts, let histogramEnergy else { return -.infinity }
        var count = 0
        var energy = 0.0
        for bin in 0..<Self.histogramBins {
            count &+= histogramCounts[bin]
            energy += histogramEnergy[bin]
        }
        guard count > 0 else { return -.infinity }
        let threshold = Self.loudness(energy / Double(count)) + Self.relativeGate
        count = 0
        energy = 0
        for bin in 0..<Self.histogramBins where histogramCounts[bin] > 0 {
            // A bin is above the threshold when its blocks are: compare each bin's mean.
            let binLoudness = Self.loudness(histogramEnergy[bin] / Double(histogramCounts[bin]))
            guard binLoudness > threshold else { continue }
            count &+= histogramCounts[bin]
            energy += histogramEnergy[bin]
        }
        return count > 0 ? Self.loudness(energy / Double(count)) : -.infinity
    }

    /// Forgets everything measured: the filters, the windows and the blocks.
    public func reset() {
        state.update(repeating: 0, count: channels * 4)
        steps.update(repeating: 0, count: Self.shortTermSteps)
        histogramCounts?.update(repeating: 0, count: Self.histogramBins)
        histogramEnergy?.update(repeating: 0, count: Self.histogramBins)
        stepSum = 0
        stepFill = 0
        stepIndex = 0
        stepsDone = 0
    }
}

/// A second-order section's coefficients (a0 = 1).
struct Biquad: Sendable {
    var b0, b1, b2, a1, a2: Double

    /// BS.1770's K-weighting at `sampleRate`: the standard's Table 1 and 2 at 48 kHz; at another rate
    /// the same high shelf (+4 dB above ~1.7 kHz) and RLB high-pass (~38 Hz) designed by the bilinear
    /// transform from the analogue prototypes that give the standard's coefficients at 48 kHz (the
    /// parameters libebur128 uses).
    static func kWeighting(sampleRate: Int) -> (shelf: Biquad, highPass: Biquad) {
        if sampleRate == LoudnessMeter.standardSampleRate {
            return (
                Biquad(
                    b0: 1.53512485958697, b1: -2.69169618940638, b2: 1.19839281085285,
                    a1: -1.69065929318241, a2: 0.73248077421585),
                Biquad(b0: 1, b1: -2, b2: 1, a1: -1.99004745483398, a2: 0.99007225036621)
            )
        }
        let rate = Double(sampleRate)
        var k = tan(Double.pi * 1681.974450955533 / rate)
        var q = 0.7071752369554196
        let vh = pow(10, 3.999843853973347 / 20)
        let vb = pow(vh, 0.4996667741545416)
        var a0 = 1 + k / q + k * k
        let shelf = Biquad(
            b0: (vh + vb * k / q + k * k) / a0, b1: 2 * (k * k - vh) / a0, b2: (vh - vb * k / q + k * k) / a0,
            a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
        k = tan(Double.pi * 38.13547087602444 / rate)
        q = 0.5003270373238773
        a0 = 1 + k / q + k * k
        let highPass = Biquad(b0: 1, b1: -2, b2: 1, a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
        return (shelf, highPass)
    }
}
