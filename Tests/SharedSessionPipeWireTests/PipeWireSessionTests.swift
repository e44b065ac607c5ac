import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// Waits (up to 3 s, recording meanwhile) until the session's snapshot says `frames` per quantum;
/// returns the quantum it said last.
func waitForSessionQuantum(_ frames: Int, rig: SessionRig) async throws -> Int {
    let end = ContinuousClock.now + .seconds(3)
    while rig.session.snapshot.quantum != frames, ContinuousClock.now < end {
        try await rig.recorder.record(for: .milliseconds(20))
    }
    return rig.session.snapshot.quantum
}

extension DaemonTests {
    @Suite("SharedSession on PipeWire")
    struct SessionTests {
        @Test(
            "daemon: an overlay's duck drops the main stream 20 dB after its fade; the restore fades back within 0.1 dB as a 400 ms fade, not a step; the overlay stays"
        )
        func duckAndRestore() async throws {
            let rig = try SessionRig()
            defer { rig.stop() }
            let lease = try rig.session.acquire(.generic, owner: "overlay unit")
            _ = try rig.openMain()
            _ = try rig.openOverlay()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.waitForTone(overlayTone, atLeast: overlayLevel - 1)
            try await rig.recorder.record(for: .milliseconds(200))
            let round = try await rig.duckAndRelease(owner: "overlay unit")
            let (samples, duckMark, releaseMark) = (round.samples, round.duckMark, round.releaseMark)
            let (before, ducked, restored) = (round.before, round.ducked, round.restored)
            let reached = try #require(
                try meter.firstWindowEnd(
                    samples, frequency: mainTone, atOrBelow: before - 19, frames: duckMark..<releaseMark))
            let latency = milliseconds(reached - duckMark)
            // The restore as heard: where the main tone leaves the ducked level, and where it is back within
            // 0.1 dB of the level before the duck (a linear 400 ms fade from 0.1 reaches it at 395 ms).
            let end = samples.count / 2
            let restoreStart = try #require(
                try meter.firstWindowEnd(
                    samples, frequency: mainTone, atOrAbove: ducked + 0.1, frames: releaseMark..<end))
            let restoredAt = try #require(
                try meter.firstWindowEnd(
                    samples, frequency: mainTone, atOrAbove: before - 0.1, frames: releaseMark..<end))
            let restoreLatency = milliseconds(restoredAt - releaseMark)
            let restoreRamp = milliseconds(restoredAt - restoreStart)
            let quantum = Double(rig.engine.quantum) / 48
            print(
                "[measure] session duck: ducked \(ducked - before) dB, restored \(restored - before) dB, duck request "
                    + "to -19 dB \(latency) ms (fadeDown 150 ms, quantum \(quantum) ms); release to within 0.1 dB "
                    + "\(restoreLatency) ms, heard restore ramp \(restoreRamp) ms (fadeUp 400 ms)"
            )
            #expect(abs(ducked - before + 20) <= 0.1)
            #expect(abs(restored - before) <= 0.1)
            // On a quiet machine the duck is heard within the fade plus one quantum and the 10 ms analysis
            // window, the restore within fadeUp plus two quanta and the window (the `[measure]` line above;
            // Benchmarks/run's duck latency). The request's moment is the test thread's, so the part past
            // the fade is a figure of the machine too: a loaded one keeps five times it.
            #expect(latency <= 150 + LoadedMachine.bound(milliseconds: quantum + 10), "the duck came late")
            #expect(
                restoreLatency <= 400 + LoadedMachine.bound(milliseconds: 2 * quantum + 10), "the restore came late")
            #expect(
                restoreRamp >= 395 - quantum - 20 && restoreRamp <= 400 + 10,
                "a 400 ms fade less the queued quantum, not a jump or a stall")
            var frame = duckMark - 4800
            while frame + 4800 <= samples.count / 2 {
                let level = try meter.toneLevel(samples, frequency: overlayTone, frames: window(frame, 4800))
                #expect(abs(level - overlayLevel) < 0.1, "overlay at \(level) dB at frame \(frame)")
                frame += 4800
            }
            lease.release()
        }

        @Test(
            "daemon: stacked ducks apply the lowest level, released in the opposite order; a volume change while ducked is heard under the duck"
        )
        func stackedDucksAndVolumeChange() async throws {
            let rig = try SessionRig()
            defer { rig.stop() }
            let lease = try rig.session.acquire(.generic, owner: "host")
            _ = try rig.openMain()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(150))
            let full = try rig.mainLevel()
            let first = rig.session.duck(owner: "feed")
            try await rig.recorder.record(for: .milliseconds(400))
            let oneDuck = try rig.mainLevel() - full
            let second = try rig.session.duck(owner: "notification", level: 0.05)
            try await rig.recorder.record(for: .milliseconds(400))
            let twoDucks = try rig.mainLevel() - full
            try rig.session.setMainVolume(0.5)
            try await rig.recorder.record(for: .milliseconds(400))
            let halfVolumeDucked = try rig.mainLevel() - full
            second.release()
            try await rig.recorder.record(for: .milliseconds(600))
            let backToFirst = try rig.mainLevel() - full
            first.release()
            try await rig.recorder.record(for: .milliseconds(700))
            let restored = try rig.mainLevel() - full
            print(
                "[measure] stacked: one duck \(oneDuck) dB, two \(twoDucks) dB, volume 0.5 while ducked "
                    + "\(halfVolumeDucked) dB, second released \(backToFirst) dB, both released \(restored) dB"
            )
            #expect(abs(oneDuck + 20) <= 0.1)
            #expect(abs(twoDucks - LevelMeter.decibels(0.05)) <= 0.1)
            #expect(abs(halfVolumeDucked - LevelMeter.decibels(0.025)) <= 0.1)
            #expect(abs(backToFirst - LevelMeter.decibels(0.05)) <= 0.1)
            #expect(abs(restored - LevelMeter.decibels(0.5)) <= 0.1)
            lease.release()
        }

        @Test("daemon: an interruption silences our streams and its end with shouldResume brings them back")
        func interruption() async throws {
            let rig = try SessionRig()
            defer { rig.stop() }
            let lease = try rig.session.acquire(.generic, owner: "host")
            _ = try rig.openMain()
            _ = try rig.openOverlay()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            rig.session.handle(.interruptionBegan)
            let rms = try await rig.recorder.level(after: .milliseconds(200), over: .milliseconds(300))
            #expect(rms < -90, "RMS during the interruption \(rms) dBFS")
            rig.session.handle(.interruptionEnded(shouldResume: true))
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 0.5, timeout: .seconds(1))
            try await rig.recorder.waitForTone(overlayTone, atLeast: overlayLevel - 0.5, timeout: .seconds(1))
            lease.release()
        }

        @Test(
            "daemon: the quantum forced from 1024 to 4096 and back: no error, no gap longer than a renegotiation's, the session follows",
            .privateDaemonOnly
        )
        func quantumChange() async throws {
            try Daemon.requirePrivate()
            let rig = try SessionRig()
            let reference = try ReferencePlayer(seconds: 10)
            defer {
                reference.stop()
                Daemon.forceQuantum(0)
                rig.stop()
            }
            let lease = try rig.session.acquire(.generic, owner: "host")
            let main = try rig.openMain()
            let start = try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            let referenceStart = try await reference.waitUntilPlaying()
            try await rig.recorder.record(for: .milliseconds(200))
            let initial = rig.session.snapshot.quantum
            Daemon.forceQuantum(4096)
            let forced = try await waitForSessionQuantum(4096, rig: rig)
            try await rig.recorder.record(for: .milliseconds(700))
            Daemon.forceQuantum(0)
            let after = try await waitForSessionQuantum(initial, rig: rig)
            try await rig.recorder.record(for: .milliseconds(700))
            let samples = rig.recorder.samples
            let end = samples.count / 2 - 480
            let step = try meter.largestStep(samples, frames: start + 480..<end)
            let ours = try longestGap(samples, frequency: mainTone, level: mainLevel, frames: start + 480..<end)
            let theirs = try reference.gap(from: referenceStart + 480)
            let renegotiated = rig.events.contains {
                if case .streamRenegotiated(main.id, _) = $0 { true } else { false }
            }
            print(
                "[measure] session quantum \(initial) -> \(forced) -> \(after); gap ours \(ours) ms, pw-play's "
                    + "\(theirs) ms"
            )
            #expect(initial > 0)
            #expect(forced == 4096)
            #expect(after == initial)
            if renegotiated {
                // pw-play's gap is no bound: on the same change it was 0 ms beside our 1.5 ms in a CI run.
                #expect(
                    ours <= renegotiationGapLimit(quantum: forced),
                    "our gap \(ours) ms, pw-play's \(theirs) ms, at a quantum of \(forced) frames")
            } else {
                #expect(step < 0.07, "largest step \(step): a gap or a jump in the recording")
                #expect(ours == 0)
            }
            #expect(rig.events.contains(.quantumChanged(frames: 4096)))
            #expect(!rig.events.contains { if case .streamFault = $0 { true } else { false } })
            lease.release()
        }

        @Test("daemon: a pw-play in another process raises other audio and mutes background music; its end lifts both")
        func otherAudioMutesBackgroundMusic() async throws {
            let rig = try SessionRig()
            defer { rig.stop() }
            let lease = try rig.session.acquire(.generic, owner: "host")
            _ = try rig.openMain()
            _ = try rig.openOverlay(backgroundMusic: true)
            try await rig.recorder.waitForTone(overlayTone, atLeast: overlayLevel - 1)
            let tone = try Daemon.writeTone(frequency: 500, amplitude: 0.1, seconds: 0.8)
            let player = try Daemon.launch("pw-play", [tone.path])
            #expect(await rig.wait { $0 == .otherAudioChanged(isPlaying: true) } != nil)
            #expect(await rig.wait { $0 == .backgroundMusicMuted(true) } != nil)
            #expect(rig.session.snapshot.secondaryAudioShouldBeSilencedHint)
            try await rig.recorder.record(for: .milliseconds(500))
            let muted = try rig.overlayLevel()
            let main = try rig.mainLevel()
            player.waitUntilExit()
            #expect(await rig.wait { $0 == .otherAudioChanged(isPlaying: false) } != nil)
            #expect(await rig.wait { $0 == .backgroundMusicMuted(false) } != nil)
            try await rig.recorder.record(for: .milliseconds(900))
            let back = try rig.overlayLevel()
            print("[measure] BGM while pw-play ran: \(muted) dBFS; after: \(back) dBFS; main meanwhile \(main) dBFS")
            #expect(muted < -60)
            #expect(abs(back - overlayLevel) < 0.1)
            #expect(abs(main - mainLevel) < 0.1)
            lease.release()
        }

        @Test(
            "daemon: killed by pid and restarted while ducked: the engine reconnects, the main stream is back still ducked, then restored",
            .privateDaemonOnly
        )
        func daemonRestartWhileDucked() async throws {
            let (rig, lease, duck, ducked, killedAt) = try await SessionRig.killedWhileDucked()
            defer { rig.stop() }
            let lostAfter = ContinuousClock.now - killedAt
            try Daemon.ensureRunning()
            let restartedAfter = ContinuousClock.now - killedAt
            let event = await rig.wait(timeout: .seconds(10)) {
                if case .reconnected = $0 { true } else { false }
            }
            let reconnectedAfter = ContinuousClock.now - killedAt
            guard case .reconnected(let attempts, let downtime) = event else {
                Issue.record("no reconnected event; events \(rig.events)")
                return
            }
            #expect(rig.engine.isConnected)
            let backMark = try await rig.recorder.waitForTone(mainTone, atLeast: ducked - 1, timeout: .seconds(5))
            let audioBackAfter = ContinuousClock.now - killedAt
            try await rig.recorder.record(for: .milliseconds(300))
            let afterReconnect = try rig.mainLevel()
            duck.release()
            try await rig.recorder.record(for: .milliseconds(700))
            let restored = try rig.mainLevel()
            print(
                "[measure] daemon kill: connectionLost after \(lostAfter.milliseconds) ms, "
                    + "daemon restarted after \(restartedAfter.milliseconds) ms, "
                    + "reconnected event seen after \(reconnectedAfter.milliseconds) ms "
                    + "(\(attempts) attempts, downtime \(downtime.milliseconds) ms), "
                    + "ducked tone in the recording \(audioBackAfter.milliseconds) ms after the kill "
                    + "(frame \(backMark)); level ducked \(ducked) -> after reconnect \(afterReconnect) "
                    + "-> restored \(restored) dBFS"
            )
            #expect(abs(afterReconnect - ducked) <= 0.1, "still ducked after the reconnection")
            #expect(abs(ducked - mainLevel + 20) <= 0.1)
            #expect(abs(restored - mainLevel) <= 0.1)
            #expect(rig.session.snapshot.isEngineConnected)
            lease.release()
        }

        @Test(
            "daemon: a voice lease opens the capture stream and it receives what is played into the source",
            .privateDaemonOnly
        )
        func voiceLeaseCaptures() async throws {
            try Daemon.requirePrivate()
            let rig = try SessionRig()
            defer { rig.stop() }
            let lease = try rig.session.acquire(.voice, owner: "voice chat")
            let tone = try Daemon.writeTone(frequency: 750, amplitude: 0.5, seconds: 0.6)
            let player = try Daemon.launch("pw-play", ["--target", "sharedsession-voice-in", tone.path])
            player.waitUntilExit()
            let captured = rig.session.voiceInput.readAll()
            let frames = captured.count / 2
            var best = -200.0
            var frame = 0
            while frame + 4800 <= frames {
                best = max(best, try meter.toneLevel(captured, frequency: 750, frames: window(frame, 4800)))
                frame += 2400
            }
            #expect(frames > 9600, "captured \(frames) frames")
            #expect(abs(best - LevelMeter.decibels(0.5)) < 0.1, "best level \(best)")
            lease.release()
        }
    }
}
