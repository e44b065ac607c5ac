import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// What the main stream sounds like when it starts playing again: measured sample by sample on a
/// constant 0.5 stem, so the gain envelope is the stem itself.
@Suite("The main stream resumes at the gain it must have, never at an old one")
struct ResumeTests {
    /// 5 ms: the pause de-click fade-in; after it the stem is the gain × 0.5.
    static let declick = 240
    static let ducked: Float = 0.5 * 0.1

    /// Frames of `stem` after the de-click fade-in, each within 0.1 dB of `level`.
    static func expectSteady(_ stem: [Float], at level: Float, _ comment: Comment) {
        let settled = stem.dropFirst(declick * 2)
        let lowest = settled.min() ?? 0
        let highest = settled.max() ?? 0
        #expect(abs(LevelMeter.decibels(Double(lowest)) - LevelMeter.decibels(Double(level))) < 0.1, comment)
        #expect(abs(LevelMeter.decibels(Double(highest)) - LevelMeter.decibels(Double(level))) < 0.1, comment)
        // Not even the fade-in goes above the level: no flash.
        #expect((stem.max() ?? 0) <= level * 1.0001, comment)
    }

    @Test(
        "host paused, a unit ducked, host plays: the main starts at the ducked gain, with no flash (a quantum rendered between the duck and the play, or both in one quantum)",
        arguments: [true, false])
    func playAfterDuckWhilePaused(renderedBetween: Bool) throws {
        let scene = try OfflineScene(signal: .constant)
        _ = try scene.renderMain(milliseconds: 50)
        scene.session.pause()
        _ = try scene.renderMain(milliseconds: 50)
        let duck = scene.session.duck(owner: "feed")
        if renderedBetween { _ = try scene.renderMain(milliseconds: 50) }
        scene.session.play()
        let stem = try scene.renderMain(milliseconds: 200)
        Self.expectSteady(
            stem, at: Self.ducked, "resumed after a duck made while paused (rendered between: \(renderedBetween))")
        duck.release()
    }

    @Test("B's pause request, C's duck, B releases: the main resumes at C's ducked gain")
    func pauseReleasedUnderADuck() throws {
        let scene = try OfflineScene(signal: .constant)
        _ = try scene.renderMain(milliseconds: 50)
        let pause = scene.session.pauseMain(owner: "B")
        _ = try scene.renderMain(milliseconds: 20)
        let duck = scene.session.duck(owner: "C")
        #expect(scene.session.snapshot.mainGain == 0.1)
        pause.release()
        let stem = try scene.renderMain(milliseconds: 200)
        Self.expectSteady(stem, at: Self.ducked, "pause released under a duck")
        duck.release()
    }

    @Test("ended without shouldResume, then a second interruption ends with it: the main waits for the host")
    func secondInterruptionDoesNotResume() throws {
        let scene = try OfflineScene(signal: .constant)
        let lease = try scene.session.acquire(.generic, owner: "host")
        _ = try scene.renderMain(milliseconds: 50)
        scene.session.handle(.interruptionBegan)
        scene.session.handle(.interruptionEnded(shouldResume: false))
        _ = try scene.renderMain(milliseconds: 50)
        scene.session.handle(.interruptionBegan)
        _ = try scene.renderMain(milliseconds: 50)
        scene.session.handle(.interruptionEnded(shouldResume: true))
        let waiting = try scene.renderMain(milliseconds: 200)
        #expect(waiting.allSatisfy { $0 == 0 }, "the main played although the host never pressed play")
        #expect(scene.session.snapshot.isMainPaused)
        #expect(scene.session.snapshot.interruption == .endedWaitingForHost)
        scene.session.play()
        let playing = try scene.renderMain(milliseconds: 200)
        Self.expectSteady(playing, at: 0.5, "after the host's play")
        lease.release()
    }
}
