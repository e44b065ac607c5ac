import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

@Suite("Interruptions")
struct InterruptionTests {
    @Test("begin silences our streams, API calls still update state; end with shouldResume resumes where it left off")
    func interruptionSilencesAndResumes() throws {
        let scene = try OfflineScene()
        let delegate = RecordingDelegate()
        scene.session.delegate = delegate
        _ = try scene.renderMain(milliseconds: 100)
        let position = scene.engine.framesRendered
        scene.session.handle(.interruptionBegan)
        #expect(scene.session.snapshot.isInterrupted)
        scene.session.mainVolume = 0.5
        #expect(scene.session.snapshot.mainVolume == 0.5)
        let silent = try scene.renderMain(milliseconds: 200)
        #expect(try isSilent(silent, lastMilliseconds: 100))
        scene.session.handle(.interruptionEnded(shouldResume: true))
        let resumed = try scene.mainLevel(after: 600)
        #expect(abs(resumed - (fullLevel + LevelMeter.decibels(0.5))) < 0.1)
        #expect(position > 0)
        #expect(delegate.interruptionsBegan == 1)
        #expect(delegate.interruptionsEnded == [true])
    }

    @Test("the main stream's media resumes after an interruption at the frame it had reached, not later")
    func interruptionResumesWhereItLeftOff() throws {
        // Each frame of the source holds its own index (/65536), so a sample tells its position.
        let scene = try OfflineScene(signal: .frameIndex)
        let before = try scene.renderMain(milliseconds: 100)
        let reached = Double(before[before.count - 2]) * 65536
        #expect(reached == 4799)
        scene.session.handle(.interruptionBegan)
        // The silence comes after the 5 ms declick fade (240 frames) that plays on from frame 4800.
        #expect(try isSilent(try scene.renderMain(milliseconds: 200), lastMilliseconds: 195))
        scene.session.handle(.interruptionEnded(shouldResume: true))
        let after = try scene.renderMain(milliseconds: 100)
        // Past the resume's declick the gain is 1 and each sample is its frame's index: the media
        // picks up after the fade-out's 240 frames, not 9600 frames (the 200 ms of silence) later.
        let last = Double(after[after.count - 2]) * 65536
        print("interruption: media at frame \(reached) before, \(last) 4800 frames after the resume")
        #expect(last >= 4800 + 4799, "the media went back")
        #expect(last <= 4800 + 4799 + 240, "the media skipped the interruption's silence")
    }

    @Test("end without shouldResume stays paused until the host plays")
    func endWithoutResume() throws {
        let scene = try OfflineScene()
        scene.session.handle(.interruptionBegan)
        scene.session.handle(.interruptionEnded(shouldResume: false))
        #expect(scene.session.snapshot.isMainPaused)
        #expect(try isSilent(try scene.renderMain(milliseconds: 200), lastMilliseconds: 50))
        let lease = try scene.session.acquire(.generic, owner: "feed")
        #expect(scene.session.snapshot.isMainPaused)
        scene.session.play()
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
        lease.release()
    }

    @Test("an interruption that begins while ducked and mid-ramp ends at the gain of the leases alive then")
    func interruptionDuringRampAndDuck() throws {
        let scene = try OfflineScene()
        let duck = scene.session.duck(owner: "feed")
        _ = try scene.renderMain(milliseconds: 50)
        scene.session.handle(.interruptionBegan)
        duck.release()
        let second = scene.session.duck(owner: "watch-party")
        second.release()
        scene.session.handle(.interruptionEnded(shouldResume: true))
        #expect(!scene.session.snapshot.isDucked)
        #expect(abs(try scene.mainLevel(after: 700) - fullLevel) < 0.1)
    }

    @Test("an interruption whose end never comes is lifted by the foreground or by the host's play")
    func unendedInterruptionIsLifted() throws {
        let scene = try OfflineScene()
        scene.session.handle(.interruptionBegan)
        scene.session.handle(.didEnterBackground)
        scene.session.handle(.willEnterForeground)
        #expect(!scene.session.snapshot.isInterrupted)
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)

        scene.session.handle(.interruptionBegan)
        scene.session.play()
        #expect(!scene.session.snapshot.isInterrupted)
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
    }

    @Test("resume after an interruption only if the host still wants to play")
    func resumeOnlyIfHostWantsTo() throws {
        let scene = try OfflineScene()
        scene.session.handle(.interruptionBegan)
        scene.session.pause()
        scene.session.handle(.interruptionEnded(shouldResume: true))
        #expect(scene.session.snapshot.isMainPaused)
        #expect(try isSilent(try scene.renderMain(milliseconds: 200), lastMilliseconds: 50))
    }

    @Test("every begin and end reaches the events stream")
    func eventsStreamGetsInterruptions() async throws {
        let scene = try OfflineScene()
        let stream = scene.session.events
        scene.session.handle(.interruptionBegan)
        scene.session.handle(.interruptionEnded(shouldResume: false))
        scene.session.close()
        var kinds: [SessionEvent.Kind] = []
        for await event in stream { kinds.append(event.kind) }
        #expect(kinds.contains(.interruptionBegan))
        #expect(kinds.contains(.interruptionEnded(shouldResume: false)))
        #expect(kinds.last == .closed)
    }
}
