import SharedSession
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
        #expect(isSilent(silent, lastMilliseconds: 100))
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
        #expect(isSilent(try scene.renderMain(milliseconds: 200), lastMilliseconds: 195))
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
        #expect(isSilent(try scene.renderMain(milliseconds: 200), lastMilliseconds: 50))
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
        #expect(isSilent(try scene.renderMain(milliseconds: 200), lastMilliseconds: 50))
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

@Suite("Route changes")
struct RouteChangeTests {
    @Test(
        "old device unavailable pauses the main stream; other reasons are reported and change nothing else",
        arguments: [RouteChangeReason.newDeviceAvailable, .categoryChange, .override, .routeConfigurationChange])
    func routeReasons(reason: RouteChangeReason) throws {
        let scene = try OfflineScene()
        let delegate = RecordingDelegate()
        scene.session.delegate = delegate
        scene.session.handle(
            .routeChanged(RouteChange(reason: reason, previousOutput: "speaker", currentOutput: "headphones")))
        #expect(!scene.session.snapshot.isMainPaused)
        #expect(scene.session.snapshot.currentRoute == "headphones")
        #expect(delegate.routeChanges.map(\.reason) == [reason])

        scene.session.handle(
            .routeChanged(
                RouteChange(reason: .oldDeviceUnavailable, previousOutput: "headphones", currentOutput: "speaker")))
        #expect(scene.session.snapshot.isMainPaused)
        #expect(delegate.kinds.contains(.mainPlaybackChanged(isPaused: true)))
        #expect(isSilent(try scene.renderMain(milliseconds: 100), lastMilliseconds: 50))
        scene.session.play()
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
    }

    @Test("a route change the engine observes arrives as an event with its reason")
    func engineRouteChange() throws {
        let scene = try OfflineScene()
        let delegate = RecordingDelegate()
        scene.session.delegate = delegate
        let change = RouteChange(reason: .routeConfigurationChange, currentOutput: "null-sink-2")
        scene.engine.post(.system(.routeChanged(change)))
        #expect(delegate.events.last?.cause == .system(.routeChanged(change)))
        #expect(delegate.events.last?.kind == .routeChanged(change))
        #expect(delegate.routeChanges == [change])
    }
}

@Suite("App lifecycle and suspend")
struct LifecycleTests {
    @Test(
        "ambient and soloAmbient suspend in the background and wake in the foreground",
        arguments: [AudioSessionCategory.ambient, .soloAmbient])
    func ambientSuspends(category: AudioSessionCategory) throws {
        let policy = try SessionPolicy(genericConfiguration: SessionConfiguration(category: category))
        let scene = try OfflineScene(policy: policy)
        let lease = try scene.session.acquire(.generic, owner: "host")
        scene.session.handle(.didEnterBackground)
        #expect(scene.session.snapshot.isSuspended)
        #expect(isSilent(try scene.renderMain(milliseconds: 100), lastMilliseconds: 50))
        scene.session.handle(.willEnterForeground)
        #expect(!scene.session.snapshot.isSuspended)
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
        lease.release()
    }

    @Test("playback and playAndRecord keep rendering in the background", arguments: [AudioSessionType.generic, .voice])
    func playbackKeepsRendering(type: AudioSessionType) throws {
        let scene = try OfflineScene()
        let lease = try scene.session.acquire(type, owner: "host")
        scene.session.handle(.didEnterBackground)
        #expect(!scene.session.snapshot.isSuspended)
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
        lease.release()
    }

    @Test("suspendInBackground suspends playback too")
    func suspendInBackgroundFlag() throws {
        let scene = try OfflineScene(policy: try SessionPolicy(suspendInBackground: true))
        let lease = try scene.session.acquire(.generic, owner: "host")
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
        scene.session.handle(.didEnterBackground)
        #expect(scene.session.snapshot.isSuspended)
        #expect(isSilent(try scene.renderMain(milliseconds: 100), lastMilliseconds: 50))
        scene.session.handle(.willEnterForeground)
        #expect(!scene.session.snapshot.isSuspended)
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
        lease.release()
    }

    @Test("suspend and wake by hand; renderAnyway keeps the sources running with the output muted")
    func manualSuspend() throws {
        let scene = try OfflineScene(signal: .constant)
        scene.session.suspend()
        #expect(scene.session.snapshot.isSuspended)
        #expect(isSilent(try scene.renderMain(milliseconds: 100), lastMilliseconds: 50))
        scene.session.wakeFromSuspend()
        #expect(!scene.session.snapshot.isSuspended)
        #expect(abs(try scene.renderMain(milliseconds: 100).last! - 0.5) < 1e-6)

        let before = scene.engine.framesRendered
        scene.session.suspend(renderAnyway: true)
        let muted = try scene.renderMain(milliseconds: 300)
        #expect(isSilent(muted, lastMilliseconds: 50))
        #expect(scene.engine.framesRendered - before == 14_400)
        scene.session.wakeFromSuspend()
        #expect(abs(try scene.renderMain(milliseconds: 500).last! - 0.5) < 1e-6)
    }
}

@Suite("Other audio and background music")
struct OtherAudioTests {
    @Test("other audio raises the hint and mutes background music under a mixable category, then lifts it")
    func backgroundMusicMute() throws {
        let scene = try OfflineScene()
        let music = try scene.session.openStream(
            StreamDescriptor(name: "lobby-music", role: .music, isBackgroundMusic: true),
            source: try SineSource(frequency: 300, amplitude: 0.5))
        let clip = try scene.session.openStream(
            StreamDescriptor(name: "clip", role: .music), source: try SineSource(frequency: 600, amplitude: 0.5),
            volume: 0.5)
        let lease = try scene.session.acquire(.generic, owner: "host")
        scene.session.handle(.otherAudioStarted)
        let snapshot = scene.session.snapshot
        #expect(snapshot.isOtherAudioPlaying)
        #expect(snapshot.secondaryAudioShouldBeSilencedHint)
        #expect(snapshot.isBackgroundMusicMuted)
        let during = try scene.engine.render(duration: .milliseconds(400))
        #expect(meter.rms(during.stems[music.id]!, lastMilliseconds: 100) < -120)
        #expect(abs(meter.rms(during.stems[clip.id]!, lastMilliseconds: 100) - (fullLevel - 6.0206)) < 0.05)
        #expect(abs(meter.rms(during.stems[scene.main.id]!, lastMilliseconds: 100) - fullLevel) < 0.05)
        scene.session.handle(.otherAudioStopped)
        let after = try scene.engine.render(duration: .milliseconds(600))
        #expect(abs(meter.rms(after.stems[music.id]!, lastMilliseconds: 100) - fullLevel) < 0.1)
        #expect(!scene.session.snapshot.secondaryAudioShouldBeSilencedHint)
        lease.release()
    }

    @Test("a non-mixable category does not mute background music")
    func nonMixableKeepsMusic() throws {
        let policy = try SessionPolicy(genericConfiguration: SessionConfiguration(category: .soloAmbient))
        let scene = try OfflineScene(policy: policy)
        let lease = try scene.session.acquire(.generic, owner: "host")
        scene.session.handle(.otherAudioStarted)
        #expect(scene.session.snapshot.secondaryAudioShouldBeSilencedHint)
        #expect(!scene.session.snapshot.isBackgroundMusicMuted)
        lease.release()
    }

    @Test("other audio does not duck the main stream unless the policy asks")
    func otherAudioDuckPolicy() throws {
        let plain = try OfflineScene()
        plain.session.handle(.otherAudioStarted)
        #expect(!plain.session.snapshot.isDucked)
        let ducking = try OfflineScene(policy: try SessionPolicy(duckWhenOtherAudioPlays: true))
        ducking.session.handle(.otherAudioStarted)
        #expect(ducking.session.snapshot.duckFactor == 0.1)
        let duck = ducking.session.duck(owner: "feed")
        #expect(ducking.session.snapshot.duckFactor == 0.1)
        ducking.session.handle(.otherAudioStopped)
        duck.release()
        #expect(!ducking.session.snapshot.isDucked)
    }
}

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
