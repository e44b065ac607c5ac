import Foundation
import SharedSession
import SharedSessionMedia
import Testing

/// A layout conversion never produces samples beyond full scale, and keeps the levels of the
/// standard matrix (a stereo file's level is untouched).
@Suite("Downmix levels")
struct DownmixTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let layout: String
        /// pan filter channels: which of the layout's channels carry the signal.
        let channels: String
        let signal: String
        var testDescription: String { name }
    }

    static let fullScaleTone = "aevalsrc=0.999*sin(2*PI*997*t):s=48000:d=2"
    static let pinkNoise = "anoisesrc=color=pink:amplitude=0.9:seed=18:r=48000:d=2"

    /// Pink noise of its own in each of `count` channels (seeds 1…count), as `layout`.
    static func independentNoise(_ count: Int, layout: String) -> String {
        let sources = (1...count).map { "anoisesrc=color=pink:amplitude=1:seed=\($0):r=48000:d=2[n\($0)]" }
        let inputs = (1...count).map { "[n\($0)]" }.joined()
        let channels = (0..<count).map { "c\($0)=c\($0)" }.joined(separator: "|")
        return sources.joined(separator: ";") + ";\(inputs)amerge=inputs=\(count),pan=\(layout)|\(channels)"
    }

    static let cases: [Case] = [
        Case(name: "stereo tone", layout: "stereo", channels: "c0=c0|c1=c0", signal: fullScaleTone),
        Case(name: "5.1 tone, front left", layout: "5.1", channels: "FL=c0", signal: fullScaleTone),
        Case(name: "5.1 tone, centre", layout: "5.1", channels: "FC=c0", signal: fullScaleTone),
        Case(name: "5.1 tone, back left", layout: "5.1", channels: "BL=c0", signal: fullScaleTone),
        Case(
            name: "5.1 tone, all channels", layout: "5.1", channels: "FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0",
            signal: fullScaleTone),
        Case(
            name: "5.1 pink noise, all channels", layout: "5.1", channels: "FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0",
            signal: pinkNoise),
        Case(
            name: "5.1 pink noise, each channel its own", layout: "5.1", channels: "",
            signal: independentNoise(6, layout: "5.1")),
        Case(name: "7.1 tone, side left", layout: "7.1", channels: "SL=c0", signal: fullScaleTone),
        Case(
            name: "7.1 tone, all channels", layout: "7.1",
            channels: "FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0|SL=c0|SR=c0", signal: fullScaleTone),
        Case(
            name: "7.1 pink noise, all channels", layout: "7.1",
            channels: "FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0|SL=c0|SR=c0", signal: pinkNoise),
        Case(
            name: "7.1 pink noise, each channel its own", layout: "7.1", channels: "",
            signal: independentNoise(8, layout: "7.1")),
    ]

    /// The level libswresample's matrix gives the left output for `channels` (−3 dB for centre,
    /// surrounds and sides; LFE left out), in dB against the signal.
    static func matrixGain(_ channels: String) -> Double {
        let weights = ["FL": 1.0, "c0": 1.0, "FC": 0.5.squareRoot(), "BL": 0.5.squareRoot(), "SL": 0.5.squareRoot()]
        let sum = channels.split(separator: "|").compactMap { weights[String($0.split(separator: "=")[0])] }
            .reduce(0, +)
        return 20 * log10(sum)
    }

    @Test("peaks stay within full scale; levels are the matrix's where nothing peaks over", arguments: cases)
    func downmixPeaks(_ test: Case) throws {
        let name = "downmix-\(test.name.filter { $0.isLetter || $0.isNumber }).flac"
        let graph = test.channels.isEmpty ? test.signal : "\(test.signal),pan=\(test.layout)|\(test.channels)"
        let path = try MediaFiles.make(name, ["-f", "lavfi", "-i", graph, "-c:a", "flac"])
        let source = try MediaFileSource(path: path, startsPlaying: true)
        let left = Listen.channel(Listen.renderAll(source), 0)
        let peak = left.reduce(0) { max($0, abs($1)) }
        let level = Listen.level(left[4800..<91_200])
        let input = test.signal == Self.fullScaleTone ? 20 * log10(0.999 / 2.0.squareRoot()) : .nan
        let matrix = input + Self.matrixGain(test.channels)
        print(
            "\(test.name) (\(source.info.channelLayout)): left peak \(peak), level \(level) dBFS "
                + "(the matrix's: \(matrix) dBFS)")
        #expect(peak <= 1.0)
        if test.layout == "stereo" {
            // A stereo file plays at its own level: nothing is converted or limited.
            #expect(abs(level - input) < 0.01)
        } else if !matrix.isNaN, matrix < 20 * log10(0.999 / 2.0.squareRoot()) + 0.01 {
            // One channel at full scale: the matrix's level, untouched by the limiter.
            #expect(abs(level - matrix) < 0.01)
        }
    }
}
