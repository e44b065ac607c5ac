import Foundation
import SharedSession
import SharedSessionMedia
import Synchronization
import Testing

/// Files that are missing, not media, without audio, damaged or in a codec this build cannot decode:
/// a typed error naming the file and what is wrong when the source is made, or an event during
/// playback; never a trap, never garbage audio.
@Suite("Bad input")
struct BadInputTests {
    /// Makes a source from `path` and returns the error it throws.
    func refusal(_ path: String) -> SessionError? {
        do {
            _ = try MediaFileSource(path: path, startsPlaying: true)
            return nil
        } catch {
            return error
        }
    }

    @Test("a missing file is a fileError naming the path")
    func missingFile() {
        let path = MediaFiles.path("no-such-file.mp4")
        let error = refusal(path)
        #expect(error?.code == .fileError)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("does not exist") == true)
    }

    @Test("a directory is a fileError")
    func directory() {
        let error = refusal(MediaFiles.directory)
        #expect(error?.code == .fileError)
        #expect(error?.message.contains("is a directory") == true)
    }

    @Test("a text file is refused as not media")
    func textFile() throws {
        let path = MediaFiles.path("notes.txt")
        try "Remember to buy popcorn.\nAnd a drink.\n".write(toFile: path, atomically: true, encoding: .utf8)
        let error = refusal(path)
        print("text file: \(String(describing: error))")
        #expect(error?.code == .mediaUnreadable || error?.code == .noAudioTrack)
        #expect(error?.message.contains(path) == true)
    }

    @Test("an empty file is refused")
    func emptyFile() throws {
        let path = MediaFiles.path("empty.wav")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let error = refusal(path)
        print("empty file: \(String(describing: error))")
        #expect(error?.code == .mediaUnreadable)
        #expect(error?.message.contains(path) == true)
    }

    @Test("a video without audio is noAudioTrack, naming what the file holds")
    func videoOnly() throws {
        let path = try MediaFiles.make(
            "video-only.mp4", ["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=1", "-an", "-c:v", "mpeg4"])
        let error = refusal(path)
        print("video only: \(String(describing: error))")
        #expect(error?.code == .noAudioTrack)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("1 video stream") == true)
    }

    @Test("an experimental codec the build will not decode is refused with the codec's name")
    func experimentalCodec() throws {
        // libavcodec writes Sonic lossless but decodes Sonic only as an experimental codec, which a
        // player does not enable.
        let path = try MediaFiles.make(
            "sonic.mkv", ["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "sonicls", "-strict", "-2"])
        let error = refusal(path)
        print("sonic: \(String(describing: error))")
        #expect(error?.code == .mediaUnreadable)
        #expect(error?.message.contains("sonic") == true)
        #expect(error?.message.contains(path) == true)
    }

    @Test("a codec FFmpeg has no decoder for is refused with the codec named")
    func unknownCodec() throws {
        // A WAV whose format tag names no codec FFmpeg knows: the container is fine, the codec is not.
        let source = try MediaFiles.tone("tag-source.wav", seconds: 0.5, codec: ["-c:a", "pcm_s16le"])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: source)))
        let fmt = try #require(findChunk("fmt ", in: bytes))
        bytes[fmt + 8] = 0x34  // wFormatTag 0x1234
        bytes[fmt + 9] = 0x12
        let path = MediaFiles.path("unknown-codec.wav")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = refusal(path)
        print("unknown codec: \(String(describing: error))")
        #expect(error?.code == .mediaUnreadable)
        #expect(error?.message.contains("no decoder") == true)
    }

    @Test("an MP4 cut before its index is refused when the source is made")
    func truncatedMP4() throws {
        let whole = try MediaFiles.tone("cut-source.mp4", seconds: 2, codec: ["-c:a", "aac"])
        let path = try truncate(whole, to: 0.5, name: "cut.mp4")
        let error = refusal(path)
        print("truncated mp4: \(String(describing: error))")
        #expect(error?.code == .mediaUnreadable)
        #expect(error?.message.contains(path) == true)
    }

    @Test("a truncated file plays what is there, then reports the truncation and the end", arguments: ["wav", "flac"])
    func truncatedPlaysWhatIsThere(_ fileExtension: String) async throws {
        let codec = fileExtension == "wav" ? ["-c:a", "pcm_s16le"] : ["-c:a", "flac"]
        let whole = try MediaFiles.tone("cut-source.\(fileExtension)", seconds: 2, codec: codec)
        let path = try truncate(whole, to: 0.5, name: "cut.\(fileExtension)")
        let source = try MediaFileSource(path: path, startsPlaying: true)
        let recorder = EventRecorder(source)
        let rendered = Listen.renderAll(source)
        let heard = AudioFormat.standard.frames(in: source.clock)
        try await recorder.waitFor { $0.contains(.endOfStream) }
        let events = recorder.events
        print("truncated \(fileExtension): heard \(heard) frames, events \(events)")
        // Half the bytes: about half the audio (FLAC's header block takes part of the first half).
        #expect(heard > 24_000 && heard < 56_000)
        #expect(
            events.contains {
                if case .decodeError(let error) = $0 { error.message.contains("truncated") } else { false }
            })
        let left = Listen.channel(rendered, 0)
        #expect(abs(Listen.level(left[4800..<(heard - 4800)]) - sineLevel) < 0.1)
        #expect(left.allSatisfy { $0.isFinite && abs($0) <= 0.126 })
    }

    @Test("events from before anyone listened start every listener's sequence and handler, not only the first")
    func backlogForEveryListener() async throws {
        let path = try MediaFiles.tone("backlog.flac", seconds: 2, codec: ["-c:a", "flac"])
        let source = try MediaFileSource(path: path)
        try source.seek(to: .seconds(1))
        // The seek's audio is in: its `seeked` event was emitted, with no one listening.
        try #require(source.waitUntilBuffered(timeout: .seconds(10)))
        let first = EventRecorder(source)
        #expect(first.events == [.seeked(to: .seconds(1))])
        // A second handler, and two event sequences made after it: each starts with the same event.
        let second = EventRecorder(source)
        #expect(second.events == [.seeked(to: .seconds(1))])
        for _ in 0..<2 {
            var events = source.events.makeAsyncIterator()
            #expect(await events.next() == .seeked(to: .seconds(1)))
        }
    }

    @Test(
        "damage in the middle is dropped and reported; the rest plays and nothing is garbage",
        arguments: ["flac", "ogg", "opus", "mp3"])
    func corruptMiddle(_ fileExtension: String) async throws {
        let codecs = [
            "flac": ["-c:a", "flac"], "ogg": ["-c:a", "libvorbis"], "opus": ["-c:a", "libopus"],
            "mp3": ["-c:a", "libmp3lame", "-b:a", "320k"],
        ]
        let whole = try MediaFiles.tone("damage-source.\(fileExtension)", seconds: 4, codec: codecs[fileExtension]!)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        // 2 kB of noise from a fixed generator in the middle of the file.
        var state: UInt32 = 0x1234_5678
        let start = bytes.count / 2
        for index in start..<min(bytes.count, start + 2048) {
            state = state &* 1_664_525 &+ 1_013_904_223
            bytes[index] = UInt8(truncatingIfNeeded: state >> 24)
        }
        let path = MediaFiles.path("damaged.\(fileExtension)")
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let clean = Listen.renderAll(try MediaFileSource(path: whole, startsPlaying: true))
        let cleanPeak = clean.reduce(0) { max($0, abs($1)) }
        let source = try MediaFileSource(path: path, startsPlaying: true)
        let recorder = EventRecorder(source)
        let rendered = Listen.renderAll(source)
        try await recorder.waitFor { $0.contains(.endOfStream) }
        let heard = AudioFormat.standard.frames(in: source.clock)
        let events = recorder.events
        let peak = rendered.reduce(0) { max($0, abs($1)) }
        print("damaged \(fileExtension): heard \(heard) of 192000 frames, peak \(peak) (clean \(cleanPeak)), \(events)")
        // Reported, as an event during playback.
        #expect(events.contains { if case .decodeError = $0 { true } else { false } })
        #expect(events.last == .endOfStream)
        let left = Listen.channel(rendered, 0)
        #expect(left.allSatisfy { $0.isFinite })
        // What comes well before the damage (the bytes' middle: 1 to 2 s in, after the headers)
        // plays as it was made.
        #expect(abs(Listen.level(left[4800..<40_000]) - sineLevel) < 0.1)
        #expect(heard >= 90_000)
        if fileExtension == "flac" || fileExtension == "opus" {
            // Checksummed data (FLAC frames, Opus in Ogg pages): what fails its check is dropped, not
            // played.
            #expect(peak <= cleanPeak * 1.01)
        } else {
            // Vorbis and MP3 frames carry no checksum of their own: a few milliseconds next to the
            // damage may decode as something else, but never as a full-scale burst.
            #expect(peak <= cleanPeak * 1.5)
        }
        if fileExtension == "opus" {
            // A dropped Ogg page is a gap in the timestamps: silence stands in for it, so the clock
            // keeps media time to the end.
            #expect(abs(heard - 192_000) <= 2048)
        }
    }

    /// The offset of the RIFF chunk `id` in a WAV file.
    func findChunk(_ id: String, in bytes: [UInt8]) -> Int? {
        let tag = Array(id.utf8)
        var offset = 12
        while offset + 8 <= bytes.count {
            if Array(bytes[offset..<offset + 4]) == tag { return offset }
            let size =
                Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16
                | Int(bytes[offset + 7]) << 24
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    /// Writes the first `fraction` of `path`'s bytes to `name` and returns its path.
    func truncate(_ path: String, to fraction: Double, name: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let output = MediaFiles.path(name)
        try data.prefix(Int(Double(data.count) * fraction)).write(to: URL(fileURLWithPath: output))
        return output
    }
}

/// Collects a source's events as they come.
final class EventRecorder: Sendable {
    private let received = Mutex<[MediaEvent]>([])

    init(_ source: MediaFileSource) {
        source.eventHandler = { [weak self] event in self?.received.withLock { $0.append(event) } }
    }

    var events: [MediaEvent] { received.withLock { $0 } }

    /// Waits (up to `timeout`) until `condition` holds for the events so far. The default is generous:
    /// the wait ends as soon as the condition holds, and under the sanitizer, beside the CPU-bound
    /// suites, a decoder was seen to take over 5 s to reach the end of a 4 s file (CI, 7ffc67f).
    func waitFor(timeout: Duration = .seconds(30), _ condition: ([MediaEvent]) -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !condition(events) {
            guard ContinuousClock.now < deadline else {
                throw TestProblem(description: "timed out waiting for events; got \(events)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
