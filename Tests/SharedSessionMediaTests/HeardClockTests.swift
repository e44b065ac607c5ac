import Foundation
import SharedSession
import SharedSessionMedia
import SharedSessionTesting
import Testing

/// The clock at the ear on the offline engine, whose timeline has no latency: exact by construction.
@Suite("The clock at the ear, offline")
struct OfflineHeardClockTests {
    @Test("offline: the clock at an instant equals the frames rendered, exactly, through quanta, a seek, a pause")
    func exactOffline() throws {
        let path = try MediaFiles.tone(
            "heard-clock.flac", frequency: 440, seconds: 12, rate: 48_000, codec: ["-c:a", "flac"])
        let movie = try MediaFileSource(path: path, startsPlaying: true)
        let engine = OfflineEngine(timelineOrigin: .zero)
        let control = try engine.openStream(
            StreamID(rawValue: 1), descriptor: StreamDescriptor(name: "movie", role: .movie), source: movie, gain: 1,
            paused: false)
        #expect(control.outputLatency == .zero)
        let format = AudioFormat.standard

        // Quanta of every size the engine takes: at the instant the next frame is heard, the clock reads
        // the frames rendered; inside the last quantum, the frame heard then.
        var rendered = 0
        for quantum in [256, 1024, 4096, 480, 1, 8192, 333] {
            _ = try engine.render(frames: quantum)
            rendered += quantum
            #expect(movie.clock(at: engine.instant(afterFrames: rendered)) == format.duration(ofFrames: rendered))
            let inside = rendered - quantum / 2
            #expect(movie.clock(at: engine.instant(afterFrames: inside)) == format.duration(ofFrames: inside))
            // An instant past what was rendered reads the last frame delivered: nothing is heard yet.
            #expect(
                movie.clock(at: engine.instant(afterFrames: rendered + 4800)) == format.duration(ofFrames: rendered))
        }
        #expect(movie.clock(at: engine.instant(afterFrames: rendered)) == movie.clock)

        // A seek reads its time at once, and from the instant its audio is heard runs from there.
        try movie.seek(to: .seconds(5))
        #expect(movie.clock(at: engine.instant(afterFrames: rendered)) == .seconds(5))
        let seekHeard = rendered
        for _ in 0..<10 {
            _ = try engine.render(frames: 1024)
            rendered += 1024
        }
        let start = try #require(
            (seekHeard..<rendered).first { movie.clock(at: engine.instant(afterFrames: $0 + 1)) > .seconds(5) })
        // Before the seek's first frame is heard the clock holds the seek's time; after, it counts on.
        #expect(movie.clock(at: engine.instant(afterFrames: seekHeard)) == .seconds(5))
        #expect(
            movie.clock(at: engine.instant(afterFrames: rendered))
                == .seconds(5) + format.duration(ofFrames: rendered - start))
        #expect(movie.clock(at: engine.instant(afterFrames: rendered)) == movie.clock)

        // A pause: the clock stops where the delivered audio (its 5 ms fade) stops, at the instant it is heard.
        movie.pause()
        for _ in 0..<4 {
            _ = try engine.render(frames: 1024)
            rendered += 1024
        }
        let stopped = movie.clock
        #expect(movie.clock(at: engine.instant(afterFrames: rendered)) == stopped)
        #expect(movie.clock(at: engine.instant(afterFrames: rendered + 48_000)) == stopped)
        print("[measure] offline clock at the ear: \(rendered) frames rendered, stopped at \(stopped)")
    }
}
