import SharedSession

/// A seek's plan: where the resampler starts and what is dropped before the target, so the first frame
/// a seek plays is the frame a decode of the file from its start plays there.
///
/// The resampler's output depends on its phase: with a ratio of `rate / gcd` input samples to
/// `48000 / gcd` output frames, only an input sample on that grid starts the same output samples a
/// decode from the start gave. So the plan starts the resampler on such a sample, before the target by
/// the resampler's filter, and drops the output frames before the target.
struct SeekPlan {
    /// The target, in output (48 kHz) frames of media time.
    var target: Int
    /// The media position (in samples at `rate`) at which the resampler starts: before the target
    /// by the resampler's filter, on a sample where a decode from the start had the resampler in
    /// the same phase (a multiple of `rate / gcd(rate, 48000)`), so the output is the same samples.
    var start: Int
    var rate: Int32
    /// Where the next decoded frame starts, by the length of the frames before it.
    var next: Int?

    private static let outputRate = AudioFormat.standard.sampleRate

    /// The plan for output frame `target` of audio decoded at `rate`.
    init(target: Int, rate: Int32) {
        let input = Int(rate)
        let output = Self.outputRate
        let inputStep = input / Self.gcd(input, output)
        // The resampler's filter reaches 32 taps of the slower rate either side; 256 input samples
        // of history cover it for every ratio up to 8:1.
        let filterPreroll = input == output ? 0 : 256 * max(1, input / output)
        let exact = Double(target) * Double(input) / Double(output)
        self.target = target
        self.start = max(0, Int(((exact - Double(filterPreroll)) / Double(inputStep)).rounded(.down))) * inputStep
        self.rate = rate
        self.next = nil
    }

    /// Where the resampler starts in the first decoded frame that reaches ``start``, placed at sample
    /// `position` of media time and `length` samples long: the sample of the frame it starts at
    /// (`offset`) and the output frames to drop after that before the target (`dropFrames`).
    func cut(position: Int, length: Int32) -> (offset: Int32, dropFrames: Int) {
        let output = Self.outputRate
        let divisor = Self.gcd(Int(rate), output)
        let inputStep = Int(rate) / divisor
        let outputStep = output / divisor
        if position <= start {
            return (Int32(start - position), target - start / inputStep * outputStep)
        }
        // The demuxer landed after the resampler's start: the first sample in phase after it,
        // if that is still before the target, or else from here (the target has passed).
        let aligned = (position + inputStep - 1) / inputStep * inputStep
        if aligned < position + Int(length), aligned / inputStep * outputStep <= target {
            return (Int32(aligned - position), target - aligned / inputStep * outputStep)
        }
        let late = Double(target) / Double(output) - Double(position) / Double(rate)
        return (0, max(0, Int((late * Double(output)).rounded())))
    }

    static func gcd(_ first: Int, _ second: Int) -> Int {
        var (a, b) = (abs(first), abs(second))
        while b != 0 { (a, b) = (b, a % b) }
        return max(a, 1)
    }
}
