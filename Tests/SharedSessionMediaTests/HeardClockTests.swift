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

    @Test(
        "an underrun stops the clock at the ear where the delivered audio stops; it runs on from there when audio is back"
    )
    func underrunHolds() throws {
        let path = try MediaFiles.tone(
            "heard-clock-underrun.flac", frequency: 440, seconds: 12, rate: 48_000, codec: ["-c:a", "flac"])
        let movie = try MediaFileSource(path: path, startsPlaying: true)
        #expect(movie.waitUntilBuffered())
        let format = AudioFormat.standard
        var buffer = [Float](repeating: 0, count: 1024 * 2)
        // A timeline of its own: call k is heard at 1 s + k quanta, 50 ms after it is rendered.
        var calls = 0
        func render() -> Int {
            defer { calls += 1 }
            let heardAt = MonotonicInstant(nanoseconds: 1_000_000_000) + format.duration(ofFrames: calls * 1024)
            return buffer.withUnsafeMutableBufferPointer {
                movie.render(into: $0.baseAddress!, frames: 1024, heardAt: heardAt)
            }
        }
        func instant(afterFrames frames: Int) -> MonotonicInstant {
            MonotonicInstant(nanoseconds: 1_000_000_000) + format.duration(ofFrames: frames)
        }
        // The decoder stalls: the ring runs dry and a render call comes up short.
        movie.setDecodeDelayForTesting(.seconds(30))
        var delivered = 0
        while movie.underrunCount == 0, calls < 100 {
            let got = render()
            if movie.underrunCount == 0 { delivered += got }
        }
        #expect(movie.underrunCount == 1)
        let stopped = movie.clock
        let underrunCall = calls - 1
        // Heard up to the last frame delivered, then held: silence is not media time.
        #expect(movie.clock(at: instant(afterFrames: underrunCall * 1024 + 4800)) == stopped)
        #expect(movie.clock(at: instant(afterFrames: (underrunCall + 20) * 1024)) == stopped)
        #expect(stopped >= format.duration(ofFrames: delivered))
        #expect(stopped <= format.duration(ofFrames: delivered + 1024))

        // The decoder catches up: the clock runs on from where it stopped, from the instant the new audio is heard.
        movie.setDecodeDelayForTesting(.zero)
        #expect(movie.waitUntilBuffered())
        calls += 10  // 10 quanta of silence went by
        let resumedCall = calls
        _ = render()
        _ = render()
        #expect(movie.clock(at: instant(afterFrames: resumedCall * 1024)) == stopped)
        #expect(
            movie.clock(at: instant(afterFrames: resumedCall * 1024 + 960))
                == stopped + format.duration(ofFrames: 960))
    }
}
