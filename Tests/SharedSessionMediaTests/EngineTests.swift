import Foundation
import SharedSession
import SharedSessionMedia
import SharedSessionTesting
import Testing

/// A media file as the session's main stream, rendered by the offline engine and measured in the mix.
@Suite("Through the engine")
struct EngineTests {
    @Test("a movie's soundtrack plays as the main stream at its level, and ducks under an overlay")
    func mainStreamOnOfflineEngine() throws {
        let path = try MediaFiles.tone(
            "movie.mkv", frequency: 1000, seconds: 3, rate: 44_100, layout: "stereo", codec: ["-c:a", "libvorbis"])
        let movie = try MediaFileSource(path: path, startsPlaying: true)
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine, policy: .default)
        let main = try session.openMainStream(source: movie)

        /// Renders `milliseconds` in 100 ms stretches, letting the decoder catch up before each (the
        /// offline engine renders far faster than real time), and returns the main stream's stem.
        func render(milliseconds: Int) throws -> [Float] {
            var stem: [Float] = []
            for _ in 0..<(milliseconds / 100) {
                movie.waitUntilBuffered()
                stem += try engine.render(duration: .milliseconds(100), quantum: 1024).stem(main.id)
            }
            return stem
        }

        let full = try render(milliseconds: 1000)
        let level = Listen.level(Listen.channel(full, 0)[4800...])
        print("movie through the offline engine: \(level) dBFS, clock \(movie.clock)")
        #expect(abs(level - sineLevel) < 0.1)
        #expect(abs(Listen.frequency(Listen.channel(full, 0)[4800...]) - 1000) < 0.05)
        #expect(movie.clock == .seconds(1))

        // A voice chat asks for ducking: the movie drops 20 dB, its clock runs on.
        let duck = session.duck(owner: "voice-chat")
        let ducked = try render(milliseconds: 1000)
        let duckedLevel = Listen.level(Listen.channel(ducked, 0)[24_000...])
        print("ducked: \(duckedLevel) dBFS")
        #expect(abs(duckedLevel - (sineLevel - 20)) < 0.1)
        #expect(movie.clock == .seconds(2))

        // The host pauses the main stream: the engine stops pulling, so the clock stops too.
        duck.release()
        session.pause()
        _ = try render(milliseconds: 500)
        let pausedAt = movie.clock
        _ = try render(milliseconds: 500)
        #expect(movie.clock == pausedAt)
        #expect(pausedAt < .milliseconds(2100))
        #expect(movie.underrunCount == 0)
    }

    @Test("an offline render right after opening or seeking a media source waits for its decoder: no underrun")
    func offlineEngineWaitsForTheDecoder() throws {
        let path = try MediaFiles.tone(
            "offline-at-once.flac", frequency: 1000, seconds: 3, rate: 44_100, codec: ["-c:a", "flac"])
        let movie = try MediaFileSource(path: path, startsPlaying: true)
        // A decoder slower than the engine: every decoding step waits 2 ms.
        movie.setDecodeDelayForTesting(.milliseconds(2))
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine, policy: .default)
        let main = try session.openMainStream(source: movie)

        // No waitUntilBuffered(): two seconds at once, far faster than real time.
        let stem = try engine.render(duration: .seconds(2), quantum: 1024).stem(main.id)
        #expect(movie.underrunCount == 0)
        #expect(movie.clock == .seconds(2))
        let reference = Listen.render(try MediaFileSource(path: path, startsPlaying: true), frames: 96_000)
        let difference = zip(stem, reference).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
        print(
            "offline render at once: largest difference from the file \(difference), \(movie.underrunCount) underruns")
        #expect(stem.count == reference.count)
        #expect(difference <= 1e-6)

        // Right after a seek too: the new position's audio, not silence or an underrun.
        try movie.seek(to: .milliseconds(500))
        let after = try engine.render(duration: .milliseconds(500), quantum: 1024).stem(main.id)
        #expect(movie.underrunCount == 0)
        #expect(movie.clock == .seconds(1))
        #expect(abs(Listen.level(Listen.channel(after, 0)[480...]) - sineLevel) < 0.1)
        #expect(abs(Listen.frequency(Listen.channel(after, 0)[480...]) - 1000) < 0.05)
    }

    @Test("a decoder that misses the offline engine's readiness timeout fails the render, naming stream and file")
    func offlineReadinessTimeoutFailsLoudly() throws {
        let path = try MediaFiles.tone("offline-timeout.flac", seconds: 3, codec: ["-c:a", "flac"])
        let movie = try MediaFileSource(path: path, startsPlaying: true)
        let engine = OfflineEngine(readinessTimeout: .milliseconds(50))
        let session = SharedSession(engine: engine, policy: .default)
        let main = try session.openMainStream(source: movie)
        _ = try engine.render(frames: 1024)
        // After a seek the decoder needs a step of 300 ms before any of the new position is there.
        movie.setDecodeDelayForTesting(.milliseconds(300))
        try movie.seek(to: .seconds(2))
        let error = try #require(throws: SessionError.self) { try engine.render(frames: 1024) }
        print("readiness timeout: \(error)")
        #expect(error.code == .engineUnavailable)
        #expect(error.message.hasPrefix("\(main.id) is not ready to render"))
        #expect(error.message.contains(path))
        #expect(movie.underrunCount == 0)
    }
}
