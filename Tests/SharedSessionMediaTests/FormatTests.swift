import Foundation
import SharedSession
import SharedSessionMedia
import Testing

/// Every format the product claims, made by ffmpeg from a known tone and measured after decoding.
@Suite("Formats")
struct FormatTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let rate: Int
        let layout: String
        let arguments: [String]
        /// How far the decoded length may be from the tone's: lossless formats keep every sample;
        /// lossy ones may keep up to a codec frame of padding (AAC in MP4 keeps its end padding).
        let lengthTolerance: Int
        /// The frames heard beyond the tone's 96,000, as measured (MediaMeasurements.md): 0 but for the
        /// codecs whose end padding the container does not trim. Decoding is deterministic: exact.
        var extraFrames = 0
        /// Where the tone may start: at once, except AC-3, whose 256-sample decoder delay Matroska
        /// does not record.
        var onsetTolerance = 1
        /// How far the level may be from the tone's (dB) and the pitch from 440 Hz: what was measured for
        /// the codec (MediaMeasurements.md) with a margin. Decoding is deterministic, so the figures do
        /// not move between runs; lossless codecs and high-rate lossy ones 0.01 dB and 0.001 Hz.
        var levelTolerance = 0.01
        var pitchTolerance = 0.001
        var testDescription: String { "\(name) (\(rate) Hz, \(layout))" }
    }

    static let video = ["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=2"]

    static let cases: [Case] = [
        Case(name: "tone.wav", rate: 44_100, layout: "mono", arguments: ["-c:a", "pcm_s16le"], lengthTolerance: 2),
        Case(name: "tone.flac", rate: 48_000, layout: "5.1", arguments: ["-c:a", "flac"], lengthTolerance: 2),
        Case(
            name: "tone.ogg", rate: 44_100, layout: "stereo", arguments: ["-c:a", "libvorbis"], lengthTolerance: 2048,
            levelTolerance: 0.06, pitchTolerance: 0.002),
        Case(
            name: "tone.opus", rate: 48_000, layout: "stereo", arguments: ["-c:a", "libopus", "-b:a", "128k"],
            lengthTolerance: 2048, levelTolerance: 0.03),
        Case(
            name: "tone.mp3", rate: 44_100, layout: "mono", arguments: ["-c:a", "libmp3lame", "-b:a", "320k"],
            lengthTolerance: 2048),
        Case(
            name: "tone.mp4", rate: 44_100, layout: "stereo",
            arguments: video + ["-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "aac", "-b:a", "192k"],
            lengthTolerance: 2048, extraFrames: 967, levelTolerance: 0.015),
        Case(
            name: "tone.mkv", rate: 48_000, layout: "5.1",
            arguments: video + ["-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "ac3", "-b:a", "448k"],
            lengthTolerance: 2048, extraFrames: 768, onsetTolerance: 256),
        Case(
            name: "tone.webm", rate: 48_000, layout: "stereo",
            arguments: video + ["-map", "1:v", "-map", "0:a", "-c:v", "libvpx", "-c:a", "libopus", "-b:a", "128k"],
            lengthTolerance: 2048, levelTolerance: 0.03),
    ]

    @Test("decodes the tone at its frequency, level and length", arguments: cases)
    func decodesTone(_ format: Case) throws {
        let path = try MediaFiles.tone(
            format.name, frequency: 440, seconds: 2, rate: format.rate, layout: format.layout, codec: format.arguments)
        // Decoding speed: a ring larger than the file is filled while the source is made.
        let started = ContinuousClock.now
        let whole = try MediaFileSource(path: path, bufferFrames: 1 << 18, startsPlaying: true)
        let elapsed = ContinuousClock.now - started
        #expect(whole.bufferedFrames >= 96_000)
        let source = try MediaFileSource(path: path, startsPlaying: true)
        let rendered = Listen.renderAll(source)
        // The length heard is what the clock says at the end; after it only the 5 ms declick of the
        // last sample may follow.
        let frames = AudioFormat.standard.frames(in: source.clock)
        let onset = Listen.channel(rendered, 0).firstIndex { abs($0) > 0.001 } ?? -1
        print(
            "\(format.name): \(source.info), \(frames) frames heard, \(rendered.count / 2) rendered, "
                + "onset \(onset), duration \(String(describing: source.duration)), decoded 2 s in "
                + "\(elapsed) "
                + "(\(Int(2 / (Double(elapsed.components.attoseconds) * 1e-18 + Double(elapsed.components.seconds))))× real time)"
        )
        #expect(abs(frames - 96_000) <= format.lengthTolerance)
        #expect(frames == 96_000 + format.extraFrames, "the length heard, to the frame")
        #expect(rendered.count / 2 - frames <= 240)
        #expect(onset >= 0 && onset <= format.onsetTolerance)
        // The steady middle: away from codec start-up and the tone's abrupt end.
        let expected = format.layout == "5.1" ? fiveOneLevel : sineLevel
        for side in 0..<2 {
            let channel = Listen.channel(rendered, side)
            let middle = channel[9600..<86_400]
            let level = Listen.level(middle)
            let frequency = Listen.frequency(middle)
            print(
                "  channel \(side): \(level) dBFS (\(abs(level - expected)) dB off), \(frequency) Hz "
                    + "(\(abs(frequency - 440)) Hz off)")
            #expect(abs(level - expected) < format.levelTolerance)
            #expect(abs(frequency - 440) < format.pitchTolerance)
        }
    }
}

/// lavfi's sine on every channel of 5.1, downmixed: L = FL + 0.707·FC + 0.707·BL (LFE left out).
let fiveOneLevel = sineLevel + 20 * log10(1 + 2 * 0.5.squareRoot())
