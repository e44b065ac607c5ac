// engine-load: drives SharedSession on PipeWireEngine for the whole-process figures of `Benchmarks/run`.
//
//   engine-load play STREAMS SECONDS   one main + STREAMS-1 overlay sines through a SharedSession;
//                                      prints "ready" once they play, then plays for SECONDS
//
// With --mixed anywhere among the arguments, the engine uses StreamLayout.mixedOverlays (the main stream
// a node of its own, the overlays mixed into one overlay-bus node) instead of one node per stream.
//   engine-load duck STREAMS TRIALS    duck latency: the duck call to the main stream at -19 dB in the
//                                      sink's monitor recording, TRIALS times; then the same for a
//                                      pw-play stream whose volume `pw-cli set-param` steps to 0.1.
//                                      Prints "engine-duck-ms X" and "pw-cli-ms X" lines.
//   engine-load soak STREAMS STEADY CHURN
//                                      STREAMS streams and voice capture: prints "ready" once they play,
//                                      plays STEADY seconds untouched, then CHURN seconds with a random
//                                      duck, lease, volume, route or quantum change every 100 ms, then
//                                      undoes them all and prints a "soak-summary" line: changes made,
//                                      stream faults and connection losses seen, the main level before
//                                      and after.
//   engine-load idle STREAMS SECONDS   STREAMS/2 paused and STREAMS/2 playing streams on the engine alone;
//                                      once they play, counts every thread's context switches and CPU
//                                      time over SECONDS (/proc/self/task) and prints one "idle-thread"
//                                      line per thread and an "idle-summary" line: what the engine costs
//                                      the machine when nothing happens but playback.
//   engine-load faults STREAMS ROUNDS  kills and restarts the private daemon ROUNDS times under
//                                      playback with a duck held; prints one "fault-round" line per
//                                      round and a "fault-summary" line.
//   engine-load remote TRIALS          a unit in another process (SharedSessionRemote) beside its
//                                      in-process twin: duck call → granted and → -19 dB heard,
//                                      SIGKILL → duck released and → restore heard (in-process: an
//                                      OverlayAudioBridge torn down), then memory and duck latency with
//                                      1, 100 and 1000 units connected (offline engine). "remote-…" lines.
//
// The daemon must be the private one of Scripts/pipewire-headless (faults restarts it through that
// script, found beside this package).
import CHeap
import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import Synchronization

guard let mode = arguments.first else { fail("usage: engine-load play|idle|duck|soak|faults STREAMS N") }

switch mode {
case "idle":
    let count = number(1, "STREAMS")
    let seconds = number(2, "SECONDS")
    /// Prints each thread's wake-ups and CPU between two samples, and their sum as a `idle-summary` line.
    func report(_ window: String, from before: [Int: ThreadSample], to after: [Int: ThreadSample], seconds: Double) {
        var total = (switches: 0, cpu: 0)
        for (tid, now) in after.sorted(by: { $0.key < $1.key }) {
            let then = before[tid] ?? ThreadSample(name: now.name, voluntary: 0, involuntary: 0, cpu: 0)
            let switches = now.voluntary - then.voluntary + now.involuntary - then.involuntary
            total.switches += switches
            total.cpu += now.cpu - then.cpu
            say(
                "idle-thread \(window) \(now.name) wakeups/s \(String(format: "%.1f", Double(switches) / seconds)) cpu-% \(String(format: "%.3f", Double(now.cpu - then.cpu) / 1e9 / seconds * 100))"
            )
        }
        say(
            "idle-summary \(window) seconds \(String(format: "%.1f", seconds)) wakeups/s \(String(format: "%.1f", Double(total.switches) / seconds)) cpu-% \(String(format: "%.3f", Double(total.cpu) / 1e9 / seconds * 100))"
        )
    }
    do {
        let engine = try PipeWireEngine(applicationName: "engine-load idle", layout: layout)
        var sources: [CountedSine] = []
        let opened = threadSamples()
        let openedAt = ContinuousClock.now
        for index in 0..<count {
            let source = try CountedSine(frequency: 1000 + Double(index) * 7, amplitude: 0.001)
            sources.append(source)
            _ = try engine.openStream(
                StreamID(rawValue: UInt64(index + 1)),
                descriptor: StreamDescriptor(name: "idle \(index)", role: index == 0 ? .movie : .game),
                source: source, gain: 1, paused: index % 2 == 1)
        }
        // The first 5 s (nodes linking, the first cycles) are reported apart from the steady state.
        Thread.sleep(forTimeInterval: 5)
        let settled = threadSamples()
        report("start", from: opened, to: settled, seconds: Double((ContinuousClock.now - openedAt).components.seconds))
        guard engine.processCycles > 50 else { fail("the streams never started") }
        say("ready")
        let cyclesBefore = engine.processCycles
        Thread.sleep(forTimeInterval: Double(seconds))
        let cycles = engine.processCycles - cyclesBefore
        report("steady", from: settled, to: threadSamples(), seconds: Double(seconds))
        say(
            "idle-streams \(count) (\(count / 2) paused) quantum \(engine.quantum) callbacks/s \(String(format: "%.1f", Double(cycles) / Double(seconds)))"
        )
        engine.shutdown()
    } catch {
        fail("\(error)")
    }

case "play":
    let count = number(1, "STREAMS")
    let seconds = number(2, "SECONDS")
    do {
        let scene = try Scene(streams: count)
        guard scene.waitUntilPlaying() else { fail("the streams never started") }
        say("ready")
        let startCycles = scene.engine.processCycles
        Thread.sleep(forTimeInterval: Double(seconds))
        say(
            "quantum \(scene.engine.quantum) callbacks/s \(Double(scene.engine.processCycles - startCycles) / Double(seconds))"
        )
        scene.close()
    } catch {
        fail("\(error)")
    }

case "duck":
    let count = number(1, "STREAMS")
    let trials = number(2, "TRIALS")
    do {
        let monitor = try Monitor()
        let scene = try Scene(streams: count)
        guard scene.waitUntilPlaying() else { fail("the streams never started") }
        monitor.record(0.5)
        var engineMs: [Double] = []
        for _ in 0..<trials {
            monitor.reset()
            monitor.record(0.3)
            let before = monitor.level(mainTone, from: monitor.samples.count / 2 - 4800, frames: 4800)
            let mark = monitor.mark()
            let duck = scene.session.duck(owner: "bench")
            monitor.record(0.4)
            if let ms = monitor.reach(mainTone, atOrBelow: before - 19, from: mark) { engineMs.append(ms) }
            duck.release()
            monitor.record(0.6)
        }
        scene.close()
        report("engine-duck-ms", engineMs)

        // The peer: a pw-play stream whose volume another process steps with pw-cli set-param.
        writeTone()
        defer { unlink(tone) }
        guard let player = spawn("pw-play", ["--volume", "1", tone]) else { fail("cannot start pw-play") }
        var node: String?
        for _ in 0..<100 where node == nil {
            Thread.sleep(forTimeInterval: 0.05)
            let dump = run("pw-cli", ["ls", "Node"]).output
            var id: String?
            for line in dump.split(separator: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("id ") { id = text.dropFirst(3).split(separator: ",").first.map(String.init) }
                if text.contains("node.name = \"pw-play\"") { node = id }
            }
        }
        guard let node else { fail("pw-play's node never appeared") }
        monitor.record(0.5)
        var peerMs: [Double] = []
        let cli = "pw-cli"
        for _ in 0..<trials {
            monitor.reset()
            monitor.record(0.3)
            let before = monitor.level(660, from: monitor.samples.count / 2 - 4800, frames: 4800)
            let mark = monitor.mark()
            run(cli, ["set-param", node, "Props", "{ volume: 0.1 }"])
            monitor.record(0.3)
            if let ms = monitor.reach(660, atOrBelow: before - 19, from: mark) { peerMs.append(ms) }
            run(cli, ["set-param", node, "Props", "{ volume: 1.0 }"])
            monitor.record(0.3)
        }
        kill(player, SIGTERM)
        _ = reap(player)
        monitor.stop()
        report("pw-cli-ms", peerMs)
        say("duck-trials engine \(engineMs.count)/\(trials) pw-cli \(peerMs.count)/\(trials)")
    } catch {
        fail("\(error)")
    }

case "soak":
    let count = number(1, "STREAMS")
    let steady = number(2, "STEADY")
    let churn = number(3, "CHURN")
    do {
        let monitor = try Monitor()
        let scene = try Scene(streams: count)
        let voice = try scene.session.acquire(.voice, owner: "bench voice")
        guard scene.waitUntilPlaying() else { fail("the streams never started") }
        let faults = Mutex<(streams: Int, connections: Int, reasons: [String])>((0, 0, []))
        let events = scene.session.events
        let listener = Task {
            for await event in events {
                switch event.kind {
                case .streamFault(let id, let reason):
                    faults.withLock {
                        $0.streams += 1
                        $0.reasons.append("\(id): \(reason)")
                    }
                case .connectionLost: faults.withLock { $0.connections += 1 }
                default: break
                }
            }
        }
        monitor.record(1)
        let before = monitor.level(mainTone, from: monitor.samples.count / 2 - 4800, frames: 4800)
        // The voice capture's frames, read every 100 ms as a voice chat would.
        var captured = scene.session.voiceInput.readAll().count / 2
        say("ready")
        let steadyEnd = ContinuousClock.now + .seconds(steady)
        while ContinuousClock.now < steadyEnd {
            Thread.sleep(forTimeInterval: 0.1)
            captured += scene.session.voiceInput.readAll().count / 2
            monitor.reset()
        }
        var generator = SystemRandomNumberGenerator()
        var ducks: [DuckLease] = []
        var leases: [SessionLease] = []
        var counts = [String: Int]()
        let end = ContinuousClock.now + .seconds(churn)
        var next = ContinuousClock.now
        while ContinuousClock.now < end {
            next += .milliseconds(100)
            let action: String
            switch Int.random(in: 0..<5, using: &generator) {
            case 0:
                action = "duck"
                if ducks.count < 3, Bool.random(using: &generator) {
                    ducks.append(scene.session.duck(owner: "bench duck \(ducks.count)"))
                } else if !ducks.isEmpty {
                    ducks.removeFirst().release()
                }
            case 1:
                action = "lease"
                if leases.count < 5, Bool.random(using: &generator) {
                    leases.append(try scene.session.acquire(.generic, owner: "bench unit \(leases.count)"))
                } else if !leases.isEmpty {
                    leases.removeFirst().release()
                }
            case 2:
                action = "volume"
                try scene.session.setMainVolume(Float.random(in: 0.3...1, using: &generator))
            case 3:
                action = "route"
                scene.session.handle(.routeChanged(RouteChange(reason: .routeConfigurationChange)))
            default:
                action = "quantum"
                let frames = [256, 512, 1024].randomElement(using: &generator)!
                _ = run("/usr/bin/pw-metadata", ["-n", "settings", "0", "clock.force-quantum", "\(frames)"])
            }
            counts[action, default: 0] += 1
            // Keep the recording's ring from filling; the level is read after the churn.
            monitor.reset()
            captured += scene.session.voiceInput.readAll().count / 2
            let wait = next - ContinuousClock.now
            if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.attoseconds) / 1e18) }
        }
        // Undo everything: the main must come back to exactly where it was.
        for duck in ducks { duck.release() }
        for lease in leases { lease.release() }
        try scene.session.setMainVolume(1)
        _ = run("/usr/bin/pw-metadata", ["-n", "settings", "0", "clock.force-quantum", "256"])
        Thread.sleep(forTimeInterval: 1)
        monitor.reset()
        monitor.record(1)
        let after = monitor.level(mainTone, from: monitor.samples.count / 2 - 4800, frames: 4800)
        captured += scene.session.voiceInput.readAll().count / 2
        listener.cancel()
        let seen = faults.withLock { $0 }
        let changes = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " ")
        say(
            "soak-summary steady-s \(steady) churn-s \(churn) \(changes) stream-faults \(seen.streams) connection-lost \(seen.connections) level-before-db \(String(format: "%.3f", before)) level-after-db \(String(format: "%.3f", after)) voice-frames \(captured) voice-seconds-expected \(steady + churn + 2)"
        )
        for reason in seen.reasons.prefix(20) { say("soak-fault \(reason)") }
        voice.release()
        scene.close()
        monitor.stop()
    } catch {
        fail("\(error)")
    }

case "faults":
    let count = number(1, "STREAMS")
    let rounds = number(2, "ROUNDS")
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scripts/pipewire-headless")
        .path
    func openFDs() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }
    do {
        let monitor = try Monitor()
        let scene = try Scene(streams: count)
        guard scene.waitUntilPlaying() else { fail("the streams never started") }
        let duck = scene.session.duck(owner: "bench")  // the gain that must come back: -20 dB
        monitor.record(1)
        let expected = monitor.level(mainTone, from: monitor.samples.count / 2 - 4800, frames: 4800)
        let leasesBefore = scene.session.snapshot.leases.count + scene.session.snapshot.ducks.count
        let fdsBefore = openFDs()
        let nodesBefore = ourNodes()
        let rssBefore = residentKiB()
        let heapBefore = heapKiB()
        var silenceMs: [Double] = []
        var restartMs: [Double] = []
        var afterReadyMs: [Double] = []
        var wrongGain = 0
        var (rssWarm, heapWarm) = (rssBefore, heapBefore)
        for round in 1...rounds {
            // Resident memory grows over the first reconnections (memory pools, the daemon's buffers
            // mapped anew) and then stays: growth after the warm-up rounds is what a leak would show.
            if round == min(6, rounds) { (rssWarm, heapWarm) = (residentKiB(), heapKiB()) }
            let pids = run(script, ["pids"]).output
            guard
                let pid = pids.split(separator: " ").first(where: { $0.hasPrefix("pipewire=") })
                    .flatMap({ Int32($0.dropFirst("pipewire=".count).trimmingCharacters(in: .whitespacesAndNewlines)) })
            else { fail("no private daemon: \(pids)") }
            let killed = ContinuousClock.now
            kill(pid, SIGKILL)
            // Wait until the engine saw the loss: from then on no stream is pulled until it is back.
            let lossDeadline = Date().addingTimeInterval(5)
            while scene.engine.isConnected, Date() < lossDeadline { Thread.sleep(forTimeInterval: 0.001) }
            // Back: every stream's render path pulling again (each source pulled two callbacks' worth),
            // watched from another thread while the daemon restarts, since it can happen before the
            // restart script returns.
            let watcher = BackWatcher(scene: scene, frames: 512)
            let started = run(script, ["start"])
            guard started.status == 0 else { fail("restart failed: \(started.output)") }
            let ready = ContinuousClock.now
            guard let back = watcher.wait(until: ready + .seconds(10)) else {
                say(
                    "fault-round \(round) silence-ms never connected \(scene.engine.isConnected) streams-playing \(watcher.playing)/\(count)"
                )
                continue
            }
            silenceMs.append(milliseconds(back - killed))
            restartMs.append(milliseconds(ready - killed))
            afterReadyMs.append(max(0, milliseconds(back - ready)))
            // The monitor reconnects too; read the main stream's level once it records again.
            monitor.reset()
            monitor.record(0.6)
            let frames = monitor.samples.count / 2
            let level = frames >= 4800 ? monitor.level(mainTone, from: frames - 4800, frames: 4800) : -200
            let ok = abs(level - expected) <= 0.5
            if !ok { wrongGain += 1 }
            say(
                "fault-round \(round) silence-ms \(format(silenceMs.last!)) daemon-restart-ms \(format(restartMs.last!)) after-ready-ms \(format(afterReadyMs.last!)) heap-kib \(heapKiB()) rss-kib \(residentKiB()) level-db \(String(format: "%.2f", level)) expected-db \(String(format: "%.2f", expected)) \(ok ? "ok" : "WRONG")"
            )
        }
        let leasesAfter = scene.session.snapshot.leases.count + scene.session.snapshot.ducks.count
        let fdsAfter = openFDs()
        let nodesAfter = ourNodes()
        let rssAfter = residentKiB()
        let heapAfter = heapKiB()
        duck.release()
        scene.close()
        monitor.stop()
        func median(_ values: [Double]) -> String { values.isEmpty ? "-1" : format(values.sorted()[values.count / 2]) }
        say(
            "fault-summary rounds \(rounds) back \(silenceMs.count) silence-median-ms \(median(silenceMs)) silence-worst-ms \(format(silenceMs.max() ?? -1)) daemon-restart-median-ms \(median(restartMs)) after-ready-median-ms \(median(afterReadyMs)) after-ready-worst-ms \(format(afterReadyMs.max() ?? -1)) wrong-gain \(wrongGain) leases-before \(leasesBefore) leases-after \(leasesAfter) fds-before \(fdsBefore) fds-after \(fdsAfter) nodes-before \(nodesBefore) nodes-after \(nodesAfter) rss-kib-before \(rssBefore) rss-kib-warm \(rssWarm) rss-kib-after \(rssAfter) heap-kib-before \(heapBefore) heap-kib-warm \(heapWarm) heap-kib-after \(heapAfter)"
        )
    } catch {
        fail("\(error)")
    }

case "remote":
    do { try remoteBenchmark(trials: number(1, "TRIALS")) } catch { fail("\(error)") }

case "remote-unit":
    do { try remoteUnitChild(path: arguments.count > 1 ? arguments[1] : "") } catch { fail("\(error)") }

case "remote-many":
    do { try remoteManyChild(path: arguments.count > 1 ? arguments[1] : "", count: number(2, "UNITS")) } catch {
        fail("\(error)")
    }

default:
    fail("unknown mode \(mode)")
}
