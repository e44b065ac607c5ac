import Foundation
import SharedSession
import SharedSessionMedia
import Testing

/// A gap in the decoded audio (a damaged frame dropped, media the demuxer skipped) is faded like a
/// seek: the package never adds a step larger than the programme's own.
@Suite("Gaps in decoded audio")
struct GapDeclickTests {
    /// The starts of the MPEG-1 Layer III frames of `bytes` (after any ID3 tag), by their headers.
    static func mp3Frames(_ bytes: [UInt8]) -> [Int] {
        let bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0]
        let rates = [44_100, 48_000, 32_000, 0]
        var frames: [Int] = []
        var offset = 0
        if bytes.count > 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 {
            offset = 10 + (Int(bytes[6]) << 21 | Int(bytes[7]) << 14 | Int(bytes[8]) << 7 | Int(bytes[9]))
        }
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF, bytes[offset + 1] & 0xFE == 0xFA else {
                offset += 1
                continue
            }
            let bitrate = bitrates[Int(bytes[offset + 2] >> 4)] * 1000
            let rate = rates[Int((bytes[offset + 2] >> 2) & 3)]
            guard bitrate > 0, rate > 0 else {
                offset += 1
                continue
            }
            frames.append(offset)
            offset += 144 * bitrate / rate + Int((bytes[offset + 2] >> 1) & 1)
        }
        return frames
    }

    /// A 440 Hz tone in MP3 at 128 kb/s (its largest step at 48 kHz: 0.020), with the headers of
    /// two frames broken (their sync words zeroed): the demuxer joins each to the frame before,
    /// which the decoder then drops as damaged.
    static func damagedMP3() throws -> (clean: String, damaged: String) {
        let clean = try MediaFiles.make(
            "gap-tone.mp3",
            [
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=4,volume=3.84", "-ac", "2",
                "-c:a", "libmp3lame", "-b:a", "128k",
            ])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: clean)))
        let frames = Self.mp3Frames(bytes)
        for index in [60, 120] {
            bytes[frames[index]] = 0
            bytes[frames[index] + 1] = 0
        }
        let damaged = MediaFiles.path("gap-damaged.mp3")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        return (clean, damaged)
    }

    /// ffmpeg's own decode of `path` at 48 kHz, left channel.
    static func ffmpegDecode(_ path: String, name: String) throws -> [Float] {
        let raw = try MediaFiles.make(name, ["-i", path, "-ar", "48000", "-f", "f32le", "-ac", "2"])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return Listen.channel(samples, 0)
    }

    @Test("damaged MP3 frames play with no step larger than ffmpeg's own decode of the file has")
    func damagedFramesAreFaded() async throws {
        let (clean, damaged) = try Self.damagedMP3()
        let reference = try Self.ffmpegDecode(damaged, name: "gap-damaged-ffmpeg.f32")
        let cleanSteps = Listen.largestStep(
            Listen.channel(Listen.renderAll(try MediaFileSource(path: clean, startsPlaying: true)), 0)[...])
        let source = try MediaFileSource(path: damaged, startsPlaying: true)
        let recorder = EventRecorder(source)
        let heard = Listen.channel(Listen.renderAll(source), 0)
        try await recorder.waitFor { $0.contains(.endOfStream) }
        let ours = Listen.largestStep(heard[...])
        let theirs = Listen.largestStep(reference[...])
        var worst = 1
        for index in 1..<heard.count where abs(heard[index] - heard[index - 1]) > abs(heard[worst] - heard[worst - 1]) {
            worst = index
        }
        print(
            "damaged MP3: largest step \(ours) at frame \(worst) (ffmpeg's decode: \(theirs), the clean file: "
                + "\(cleanSteps)); \(heard.count) frames, \(recorder.events.filter { $0 != .endOfStream }.count) "
                + "decode events")
        #expect(recorder.events.contains { if case .decodeError = $0 { true } else { false } })
        // No step beyond what ffmpeg's own decode has (it conceals the damage), and within the fade's
        // own slope of the programme's largest step.
        #expect(ours <= theirs)
        #expect(ours <= cleanSteps * 1.15)
    }

    @Test("media the demuxer skips plays as silence faded at both ends (an Ogg Opus page that fails its check)")
    func skippedMediaIsFaded() async throws {
        let clean = try MediaFiles.tone("gap-tone.opus", seconds: 4, codec: ["-c:a", "libopus"])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: clean)))
        // 512 bytes of a fixed generator's noise in the middle: the pages there fail their CRC.
        var state: UInt32 = 0x0BAD_F00D
        let start = bytes.count / 2
        for index in start..<min(bytes.count, start + 512) {
            state = state &* 1_664_525 &+ 1_013_904_223
            bytes[index] = UInt8(truncatingIfNeeded: state >> 24)
        }
        let damaged = MediaFiles.path("gap-skipped.opus")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let cleanStep = Listen.largestStep(
            Listen.channel(Listen.renderAll(try MediaFileSource(path: clean, startsPlaying: true)), 0)[...])
        let source = try MediaFileSource(path: damaged, startsPlaying: true)
        let recorder = EventRecorder(source)
        let heard = Listen.channel(Listen.renderAll(source), 0)
        try await recorder.waitFor { $0.contains(.endOfStream) }
        let silent = heard.indices.filter { abs(heard[$0]) < 1e-6 }.count
        let step = Listen.largestStep(heard[...])
        print(
            "Ogg Opus with a page dropped by the demuxer: largest step \(step) (the clean tone: \(cleanStep)),"
                + " \(silent) silent frames")
        // The gap is there (silence keeps the clock on media time), and its edges do not click.
        #expect(silent > 4800)
        #expect(abs(AudioFormat.standard.frames(in: source.clock) - 192_000) <= 2048)
        #expect(step <= cleanStep * 1.15)
    }
}
