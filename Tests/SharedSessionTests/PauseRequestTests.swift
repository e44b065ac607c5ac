import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

@Suite("Pause instead of duck")
struct PauseRequestTests {
    @Test("a pause request pauses the main stream and the last one resumes it where it stopped")
    func pauseAndResume() throws {
        let scene = try OfflineScene(signal: .constant)
        let a = scene.session.pauseMain(owner: "feed")
        let b = scene.session.pauseMain(owner: "notifications")
        #expect(scene.session.snapshot.isMainPaused)
        #expect(try scene.renderMain(milliseconds: 100).suffix(100).allSatisfy { $0 == 0 })
        a.release()
        #expect(scene.session.snapshot.isMainPaused)
        b.release()
        #expect(!scene.session.snapshot.isMainPaused)
        #expect(try scene.renderMain(milliseconds: 100).last == 0.5)
        // Where it stopped: each frame of this source holds its own index (/65536).
        let indexed = try OfflineScene(signal: .frameIndex)
        let before = try indexed.renderMain(milliseconds: 100)
        let reached = Double(before[before.count - 2]) * 65536
        let c = indexed.session.pauseMain(owner: "feed")
        let d = indexed.session.pauseMain(owner: "notifications")
        #expect(try isSilent(try indexed.renderMain(milliseconds: 200), lastMilliseconds: 195))
        c.release()
        d.release()
        let after = try indexed.renderMain(milliseconds: 100)
        // The pause's 5 ms fade-out (240 frames) played on from the frame after `reached`, so the media
        // stopped 240 frames later; the resume fades in over 240 more, and then every sample is its
        // frame's index at gain 1, continuing from there, not from 200 ms (9600 frames) later.
        let stopped = reached + 1 + 240
        let first = Double(after[2 * 240]) * 65536
        print("[measure] pause request: media at frame \(reached) before, \(first) after the resume's fade-in")
        #expect(first == stopped + 240, "the media did not continue where it stopped")
        #expect((240..<after.count / 2).allSatisfy { Double(after[2 * $0]) * 65536 == stopped + Double($0) })
    }

    @Test("pause and duck are independent: when the pause goes, the main plays at the ducked gain")
    func pauseWithDuck() throws {
        let scene = try OfflineScene()
        let duck = scene.session.duck(owner: "watch-party")
        let pause = scene.session.pauseMain(owner: "feed")
        pause.release()
        #expect(abs(try scene.mainLevel(after: 400) - (fullLevel - 20)) < 0.05)
        duck.release()
    }

    @Test("the host pausing during a pause request keeps the main paused after it goes")
    func hostPauseWins() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        let request = session.pauseMain(owner: "feed")
        session.pause()
        request.release()
        #expect(session.snapshot.isMainPaused)
        #expect(engine.paused[main.id] == true)
    }

    @Test("the host pressing play during a pause request plays at once, until the next pause request")
    func hostPlayOverrides() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        let first = session.pauseMain(owner: "feed")
        session.play()
        #expect(!session.snapshot.isMainPaused)
        let second = session.pauseMain(owner: "notifications")
        #expect(session.snapshot.isMainPaused)
        first.release()
        second.release()
        #expect(!session.snapshot.isMainPaused)
        // Pause and resume reach the engine once per transition.
        let pauses = engine.calls.filter { if case .setPaused(main.id, _) = $0 { true } else { false } }
        #expect(
            pauses == [
                .setPaused(main.id, paused: true), .setPaused(main.id, paused: false),
                .setPaused(main.id, paused: true), .setPaused(main.id, paused: false),
            ])
    }

    @Test("never resume what we did not pause")
    func neverResumeHostPause() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        _ = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        session.pause()
        let request = session.pauseMain(owner: "feed")
        request.release()
        session.handle(.interruptionBegan)
        session.handle(.interruptionEnded(shouldResume: true))
        #expect(session.snapshot.isMainPaused)
    }
}
