import Foundation
import SharedSession
import SharedSessionMedia
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
                stem += try engine.render(duration: .milliseconds(100), quantum: 1024).stems[main.id] ?? []
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
}
