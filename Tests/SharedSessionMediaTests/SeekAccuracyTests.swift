import Foundation
import SharedSession
import SharedSessionMedia
import Testing

/// Where a seek lands and what it plays, in every container the product claims: a click in the
/// file must arrive after a seek exactly where the file decoded straight from its start has it,
/// and the audio after the seek must be that decode's audio from the first frame on.
@Suite("Seek accuracy")
struct SeekAccuracyTests {
    struct Container: Sendable, CustomTestStringConvertible {
        let name: String
        let rate: Int
        let arguments: [String]
        /// The largest residual, in dB under the programme, of the audio after a seek against the
        /// straight decode. Lossless and overlap-only codecs (AAC, Vorbis, MP3 once primed) decode
        /// the same samples from any start; Opus's decoder state converges over its pre-roll.
        let residual: Double
        var testDescription: String { name }
    }

    static let video = ["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=4"]

    static let containers: [Container] = [
        Container(name: "seek-click.wav", rate: 44_100, arguments: ["-c:a", "pcm_s16le"], residual: -120),
        Container(name: "seek-click.flac", rate: 48_000, arguments: ["-c:a", "flac"], residual: -120),
        Container(name: "seek-click.ogg", rate: 44_100, arguments: ["-c:a", "libvorbis"], residual: -120),
        Container(
            name: "seek-click.opus", rate: 48_000, arguments: ["-c:a", "libopus", "-b:a", "128k"], residual: -60),
        Container(
            name: "seek-click.mp3", rate: 44_100, arguments: ["-c:a", "libmp3lame", "-b:a", "192k"], residual: -120),
        Container(
            name: "seek-click.mp4", rate: 44_100,
            arguments: video + ["-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "aac", "-b:a", "192k"],
            residual: -120),
        Container(
            name: "seek-click.mkv", rate: 48_000,
            arguments: video + ["-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "libopus", "-b:a", "128k"],
            residual: -60),
        Container(
            name: "seek-click.webm", rate: 48_000,
            arguments: video + ["-map", "1:v", "-map", "0:a", "-c:v", "libvpx", "-c:a", "libopus", "-b:a", "128k"],
            residual: -60),
    ]

    /// Two quiet tones and a click of one sample at exactly 2.000 s, at `rate`, on both channels.
    static func clickFile(_ container: Container) throws -> String {
        let programme = "0.05*sin(2*PI*440*t)+0.05*sin(2*PI*1530*t)+0.6*eq(n\\,\(2 * container.rate))"
        return try MediaFiles.make(
            container.name,
            ["-f", "lavfi", "-i", "aevalsrc=\(programme)|\(programme):s=\(container.rate):d=4"] + container.arguments)
    }

    /// The frame of the largest sample of `samples` (mono) in `range`.
    static func click(_ samples: [Float], in range: Range<Int>) -> Int {
        var best = range.lowerBound
        for index in range where abs(samples[index]) > abs(samples[best]) { best = index }
        return best
    }

    /// The level in dB of `samples − reference` against `reference` over `range`.
    static func residual(_ samples: [Float], _ reference: ArraySlice<Float>, _ range: Range<Int>) -> Double {
        let base = reference.startIndex
        var difference = 0.0
        var power = 0.0
        for index in range {
            let value = Double(samples[index]) - Double(reference[base + index])
            difference += value * value
            power += Double(reference[base + index]) * Double(reference[base + index])
        }
        return Listen.decibels((difference / max(power, 1e-30)).squareRoot())
    }

    /// Seek targets: a whole 100 ms before the click, and one between two milliseconds (a Matroska
    /// timestamp cannot name it), and one 60 ms in (inside the codec's start-up: pre-roll before the start).
    static let targets = [91_200, 91_793, 2880]

    @Test(
        "a click arrives after a seek on its frame, and the audio is the file's from the first frame",
        arguments: containers)
    func seekLandsOnTheFrame(_ container: Container) throws {
        let path = try Self.clickFile(container)
        let straight = Listen.channel(Listen.renderAll(try MediaFileSource(path: path, startsPlaying: true)), 0)
        let clickAt = Self.click(straight, in: 93_600..<98_400)
        print("\(container.name): straight decode has the click at frame \(clickAt) (the file: 96000)")
        // Decoded from the start, the file is where it was made (gapless decoding of every codec).
        #expect(abs(clickAt - 96_000) <= 1)
        // And it is what ffmpeg's own decode of the file is: nothing spliced, faded or shifted.
        let theirs = try GapDeclickTests.ffmpegDecode(path, name: container.name + ".ffmpeg.f32")
        let compared = min(theirs.count, straight.count)
        let agreement = Self.residual(straight, theirs[...], 0..<compared)
        print("  \(container.name): straight decode against ffmpeg's: \(agreement) dB over \(compared) frames")
        #expect(agreement <= -100)
        #expect(abs(theirs.count - straight.count) <= 2048)
        for target in Self.targets {
            let source = try MediaFileSource(path: path, startsPlaying: true)
            let last = Listen.channel(Listen.render(source, frames: 4800), 0).last ?? 0
            let time = AudioFormat.standard.duration(ofFrames: target)
            try source.seek(to: time)
            #expect(AudioFormat.standard.frames(in: source.clock) == target)
            let heard = Listen.channel(Listen.render(source, frames: 9600), 0)
            // The clock is what is heard: it moved by the frames rendered from the target.
            #expect(AudioFormat.standard.frames(in: source.clock) == target + 9600)
            let reference = straight[target..<(target + 9600)]
            // The first 5 ms, where a seek goes wrong (a frame early or late, stale audio from before the
            // seek): the file's audio fading in linearly over 240 frames while the last sample heard
            // before the seek decays, exactly as MediaFileSource's de-click shapes them.
            let expected = (0..<240).map { index -> Float in
                reference[reference.startIndex + index] * min(1, Float(index + 1) / 240)
                    + last * max(0, 1 - Float(index) / 240)
            }
            let first = Self.residual(heard, expected[...], 0..<240)
            let early = Self.residual(heard, reference, 240..<1920)
            let later = Self.residual(heard, reference, 1920..<9600)
            if target < clickAt, clickAt - target < 9600 {
                let arrival = Self.click(heard, in: 240..<9600)
                print(
                    "  \(container.name) seek to frame \(target): click after \(arrival) frames (expected "
                        + "\(clickAt - target)), "
                        + "residual \(first) dB over the first 5 ms, \(early) dB over 5-40 ms, \(later) dB over "
                        + "40-200 ms"
                )
                #expect(abs(arrival - (clickAt - target)) <= 1)
            } else {
                print(
                    "  \(container.name) seek to frame \(target): residual \(first) dB over the first 5 ms, \(early) dB "
                        + "over 5-40 ms, \(later) dB over 40-200 ms")
            }
            #expect(first <= container.residual)
            #expect(early <= container.residual)
            #expect(later <= container.residual)
        }
    }
}
