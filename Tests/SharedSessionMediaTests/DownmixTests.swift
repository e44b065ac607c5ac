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

    /// Where the matrix sums past full scale, the limiter holds the output just under it. Measured
    /// (deterministic: seeded noise, a lossless file, a sample-exact limiter): a full-scale tone in
    /// every channel of 5.1 and 7.1 plays at −3.0185 dBFS on both sides (a 0.999 sine is −3.0190), its
    /// peak 0.999; pink noise in every channel at −9.1 to −9.6 dBFS, each channel's own at −10.8 to
    /// −11.6 dBFS, peaks 0.999. A silent or halved output fails these.
    static let limitedToneLevel = 20 * log10(0.999 / 2.0.squareRoot())
    static let limitedToneTolerance = 0.01
    static let limitedNoiseFloor = -12.0
    static let limitedPeakFloor: Float = 0.99

    /// The level libswresample's matrix gives the left (`right: false`) or right output for `channels`
    /// (−3 dB for centre, surrounds and sides; LFE left out), in dB against the signal; −∞ for a side
    /// no channel reaches.
    static func matrixGain(_ channels: String, right: Bool = false) -> Double {
        let half = 0.5.squareRoot()
        let weights =
            right
            ? ["FR": 1.0, "c1": 1.0, "FC": half, "BR": half, "SR": half]
            : ["FL": 1.0, "c0": 1.0, "FC": half, "BL": half, "SL": half]
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
        let rendered = Listen.renderAll(source)
        let input = test.signal == Self.fullScaleTone ? 20 * log10(0.999 / 2.0.squareRoot()) : .nan
        for (index, side) in ["left", "right"].enumerated() {
            let samples = Listen.channel(rendered, index)
            let peak = samples.reduce(0) { max($0, abs($1)) }
            let level = Listen.level(samples[4800..<91_200])
            let gain = Self.matrixGain(test.channels, right: index == 1)
            let matrix = input + gain
            print(
                "\(test.name) (\(source.info.channelLayout)), \(side): peak \(peak), level \(level) dBFS "
                    + "(the matrix's: \(matrix) dBFS)")
            #expect(peak <= 1.0, "\(side)")
            if test.channels.isEmpty {
                // Every channel its own noise: both sides carry the mix, limited under full scale.
                #expect(level > Self.limitedNoiseFloor, "\(side): \(level) dBFS")
                #expect(peak > Self.limitedPeakFloor, "\(side): peak \(peak)")
            } else if !gain.isFinite {
                // No channel of the file reaches this side: it stays silent (the limiter is linked, so the
                // other side's gain changes cannot leak into it).
                #expect(peak < 1e-6, "\(side): peak \(peak)")
            } else if test.layout == "stereo" {
                // A stereo file plays at its own level: nothing is converted or limited.
                #expect(abs(level - input) < 0.01, "\(side)")
            } else if !matrix.isNaN, matrix < input + 0.01 {
                // One channel at full scale: the matrix's level, untouched by the limiter.
                #expect(abs(level - matrix) < 0.01, "\(side)")
            } else if !matrix.isNaN {
                // The matrix sums past full scale: the limiter holds the tone just under it.
                #expect(abs(level - Self.limitedToneLevel) < Self.limitedToneTolerance, "\(side): \(level) dBFS")
                #expect(peak > Self.limitedPeakFloor, "\(side): peak \(peak)")
            } else {
                // Pink noise in every channel, summed past full scale: limited, never silent.
                #expect(level > Self.limitedNoiseFloor, "\(side): \(level) dBFS")
                #expect(peak > Self.limitedPeakFloor, "\(side): peak \(peak)")
            }
        }
    }
}
