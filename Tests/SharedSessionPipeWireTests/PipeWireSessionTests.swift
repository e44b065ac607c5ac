import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import Synchronization
import Testing

/// A ``SharedSession`` on a ``PipeWireEngine``, its events, and a recorder of the sink.
final class SessionRig {
    let engine: PipeWireEngine
    let session: SharedSession
    let recorder: SinkRecorder
    private let log = SessionEventLog()
    private var listener: Task<Void, Never>?

    init(policy: SessionPolicy = .default) throws {
        try Daemon.ensureRunning()
        engine = try PipeWireEngine(applicationName: "SharedSession session tests")
        session = SharedSession(engine: engine, policy: policy)
        recorder = try SinkRecorder()
        let events = session.events
        listener = Task { [log] in
            for await event in events { log.append(event.kind) }
        }
    }

    var events: [SessionEvent.Kind] { log.all }

    /// Waits for an event matching `predicate`.
    func wait(
        timeout: Duration = .seconds(5), for predicate: (SessionEvent.Kind) -> Bool
    ) async throws -> SessionEvent.Kind? {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if let event = events.first(where: predicate) { return event }
            try await Task.sleep(for: .milliseconds(10))
            recorder.poll()
        }
        return events.first(where: predicate)
    }

    /// The main tone's level over the 100 ms before `frame` (default: now).
    func mainLevel(before frame: Int? = nil) -> Double {
        let end = frame ?? recorder.mark()
        return Signal.level(recorder.samples, frequency: mainTone, from: end - 4800, frames: 4800)
    }

    func overlayLevel(before frame: Int? = nil) -> Double {
        let end = frame ?? recorder.mark()
        return Signal.level(recorder.samples, frequency: overlayTone, from: end - 4800, frames: 4800)
    }

    func openMain() throws -> StreamHandle {
        try session.openMainStream(source: SineSource(frequency: mainTone, amplitude: 0.5))
    }

    func openOverlay(backgroundMusic: Bool = false) throws -> StreamHandle {
        try session.openStream(
            StreamDescriptor(name: "overlay", role: .music, isBackgroundMusic: backgroundMusic),
            source: SineSource(frequency: overlayTone, amplitude: 0.25))
    }

    func stop() {
        session.close()
        listener?.cancel()
        recorder.stop()
        engine.shutdown()
    }
}

/// The kinds of a session's events, in order.
final class SessionEventLog: Sendable {
    private let kinds = Mutex<[SessionEvent.Kind]>([])
    func append(_ kind: SessionEvent.Kind) { kinds.withLock { $0.append(kind) } }
    var all: [SessionEvent.Kind] { kinds.withLock { $0 } }
}

extension DaemonTests {
    @Suite("SharedSession on PipeWire")
    struct SessionTests {
        @Test(
            "daemon: an overlay's duck drops the main stream 20 dB within the fade plus two quanta; the restore comes back within 0.5 dB; the overlay stays"
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
            let duckMark = rig.recorder.mark()
            let duck = rig.session.duck(owner: "overlay unit")
            try await rig.recorder.record(for: .milliseconds(600))
            let releaseMark = rig.recorder.mark()
            duck.release()
            try await rig.recorder.record(for: .milliseconds(900))
            let samples = rig.recorder.samples
            let before = rig.mainLevel(before: duckMark)
            let ducked = rig.mainLevel(before: releaseMark)
            let restored = rig.mainLevel()
            let reached = try #require(
                Signal.firstFrame(
                    samples, frequency: mainTone, atOrBelow: before - 19, from: duckMark, until: releaseMark))
            let latency = milliseconds(reached - duckMark)
            let restoredAt = Signal.firstFrame(
                samples.map { -$0 }, frequency: mainTone, atOrBelow: 0, from: releaseMark, until: samples.count / 2)
            _ = restoredAt
            let quantum = Double(rig.engine.quantum) / 48
            print(
                "[measure] session duck: ducked \(ducked - before) dB, restored \(restored - before) dB, duck request to -19 dB \(latency) ms (fadeDown 150 ms, quantum \(quantum) ms)"
            )
            #expect(abs(ducked - before + 20) <= 1)
            #expect(abs(restored - before) <= 0.5)
            #expect(latency <= 150 + 2 * quantum + 10, "10 ms is the analysis window")
            var frame = duckMark - 4800
            while frame + 4800 <= samples.count / 2 {
                let level = Signal.level(samples, frequency: overlayTone, from: frame, frames: 4800)
                #expect(abs(level - overlayLevel) < 0.5, "overlay at \(level) dB at frame \(frame)")
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
            let full = rig.mainLevel()
            let first = rig.session.duck(owner: "feed")
            try await rig.recorder.record(for: .milliseconds(400))
            let oneDuck = rig.mainLevel() - full
            let second = try rig.session.duck(owner: "notification", level: 0.05)
            try await rig.recorder.record(for: .milliseconds(400))
            let twoDucks = rig.mainLevel() - full
            try rig.session.setMainVolume(0.5)
            try await rig.recorder.record(for: .milliseconds(400))
            let halfVolumeDucked = rig.mainLevel() - full
            second.release()
            try await rig.recorder.record(for: .milliseconds(600))
            let backToFirst = rig.mainLevel() - full
            first.release()
            try await rig.recorder.record(for: .milliseconds(700))
            let restored = rig.mainLevel() - full
            print(
                "[measure] stacked: one duck \(oneDuck) dB, two \(twoDucks) dB, volume 0.5 while ducked \(halfVolumeDucked) dB, second released \(backToFirst) dB, both released \(restored) dB"
            )
            #expect(abs(oneDuck + 20) <= 1)
            #expect(abs(twoDucks - Signal.decibels(0.05)) <= 1)
            #expect(abs(halfVolumeDucked - Signal.decibels(0.025)) <= 1)
            #expect(abs(backToFirst - Signal.decibels(0.05)) <= 1)
            #expect(abs(restored - Signal.decibels(0.5)) <= 0.5)
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
            "daemon: the quantum forced from 1024 to 4096 and back: no error, no gap, the session follows",
            .privateDaemonOnly
        )
        func quantumChange() async throws {
            let rig = try SessionRig()
            defer {
                Daemon.forceQuantum(0)
                rig.stop()
            }
            let lease = try rig.session.acquire(.generic, owner: "host")
            _ = try rig.openMain()
            let start = try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(200))
            Daemon.forceQuantum(4096)
            try await rig.recorder.record(for: .milliseconds(700))
            let forced = rig.session.snapshot.quantum
            Daemon.forceQuantum(0)
            try await rig.recorder.record(for: .milliseconds(700))
            let samples = rig.recorder.samples
            let end = samples.count / 2 - 480
            let step = Signal.largestStep(samples, from: start + 480, until: end)
            #expect(forced == 4096)
            #expect(rig.session.snapshot.quantum == 1024)
            #expect(step < 0.07, "largest step \(step): a gap or a jump in the recording")
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
            #expect(try await rig.wait { $0 == .otherAudioChanged(isPlaying: true) } != nil)
            #expect(try await rig.wait { $0 == .backgroundMusicMuted(true) } != nil)
            #expect(rig.session.snapshot.secondaryAudioShouldBeSilencedHint)
            try await rig.recorder.record(for: .milliseconds(500))
            let muted = rig.overlayLevel()
            let main = rig.mainLevel()
            player.waitUntilExit()
            #expect(try await rig.wait { $0 == .otherAudioChanged(isPlaying: false) } != nil)
            #expect(try await rig.wait { $0 == .backgroundMusicMuted(false) } != nil)
            try await rig.recorder.record(for: .milliseconds(900))
            let back = rig.overlayLevel()
            print("[measure] BGM while pw-play ran: \(muted) dBFS; after: \(back) dBFS; main meanwhile \(main) dBFS")
            #expect(muted < -60)
            #expect(abs(back - overlayLevel) < 0.5)
            #expect(abs(main - mainLevel) < 0.5)
            lease.release()
        }

        @Test(
            "daemon: killed by pid and restarted while ducked: the engine reconnects, the main stream is back still ducked, then restored",
            .privateDaemonOnly
        )
        func daemonRestartWhileDucked() async throws {
            let rig = try SessionRig()
            defer { rig.stop() }
            let lease = try rig.session.acquire(.generic, owner: "host")
            _ = try rig.openMain()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            let duck = rig.session.duck(owner: "feed")
            try await rig.recorder.record(for: .milliseconds(400))
            let ducked = rig.mainLevel()
            let pid = try #require(Daemon.pids().pipewire, "the daemon is not the script's own: cannot kill it")
            let killedAt = ContinuousClock.now
            kill(pid, SIGKILL)
            #expect(try await rig.wait { if case .connectionLost = $0 { true } else { false } } != nil)
            let lostAfter = ContinuousClock.now - killedAt
            try Daemon.ensureRunning()
            let restartedAfter = ContinuousClock.now - killedAt
            let event = try await rig.wait(timeout: .seconds(10)) {
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
            let afterReconnect = rig.mainLevel()
            duck.release()
            try await rig.recorder.record(for: .milliseconds(700))
            let restored = rig.mainLevel()
            print(
                "[measure] daemon kill: connectionLost after \(lostAfter.milliseconds) ms, "
                    + "daemon restarted after \(restartedAfter.milliseconds) ms, "
                    + "reconnected event seen after \(reconnectedAfter.milliseconds) ms "
                    + "(\(attempts) attempts, downtime \(downtime.milliseconds) ms), "
                    + "ducked tone in the recording \(audioBackAfter.milliseconds) ms after the kill "
                    + "(frame \(backMark)); level ducked \(ducked) -> after reconnect \(afterReconnect) "
                    + "-> restored \(restored) dBFS"
            )
            #expect(abs(afterReconnect - ducked) <= 1, "still ducked after the reconnection")
            #expect(abs(ducked - mainLevel + 20) <= 1)
            #expect(abs(restored - mainLevel) <= 0.5)
            #expect(rig.session.snapshot.isEngineConnected)
            lease.release()
        }

        @Test(
            "daemon: a voice lease opens the capture stream and it receives what is played into the source",
            .privateDaemonOnly
        )
        func voiceLeaseCaptures() async throws {
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
                best = max(best, Signal.level(captured, frequency: 750, from: frame, frames: 4800))
                frame += 2400
            }
            #expect(frames > 9600, "captured \(frames) frames")
            #expect(abs(best - Signal.decibels(0.5)) < 1, "best level \(best)")
            lease.release()
        }
    }
}
