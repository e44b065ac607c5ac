// engine-load remote TRIALS: the figures of a unit in another process (SharedSessionRemote), each
// beside its in-process twin measured in the same run. The units are this executable again, started
// as `engine-load remote-unit SOCKET` (one unit, driven by lines on its stdin) and
// `engine-load remote-many SOCKET N` (N connected units in one process).
import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionRemote
import Synchronization

/// A child process of this executable, its stdin and stdout as pipes.
final class Child {
    let pid: pid_t
    private let input: FileHandle
    private let output: FileHandle
    private var pending = Data()

    init(_ arguments: [String]) {
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { fail("pipe failed") }
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        let argv = (["/proc/self/exe"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child = pid_t()
        guard posix_spawn(&child, "/proc/self/exe", &actions, nil, argv, environ) == 0 else { fail("spawn failed") }
        close(toChild[0])
        close(fromChild[1])
        pid = child
        input = FileHandle(fileDescriptor: toChild[1], closeOnDealloc: true)
        output = FileHandle(fileDescriptor: fromChild[0], closeOnDealloc: true)
    }

    func send(_ line: String) { input.write(Data((line + "\n").utf8)) }

    func line() -> String {
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                return line
            }
            let chunk = output.availableData
            if chunk.isEmpty { fail("the child \(pid) closed its output") }
            pending += chunk
        }
    }

    func ask(_ line: String) -> String {
        send(line)
        return self.line()
    }

    func kill() {
        _ = Foundation.kill(pid, SIGKILL)
        _ = reap(pid)
    }
}

/// Records when the session took each input: the release of a dead unit's duck.
final class InputClock: SessionInputObserver {
    private let releases = Mutex<[LeaseID: ContinuousClock.Instant]>([:])

    func session(_ session: SharedSession, received input: SessionInput, at time: ContinuousClock.Instant) {
        if case .releaseDuck(let id, _) = input.request { releases.withLock { $0[id] = time } }
    }

    func released(_ id: LeaseID) -> ContinuousClock.Instant? { releases.withLock { $0[id] } }
}

/// So a thousand connections fit: the soft limit on descriptors raised to the hard one.
func raiseDescriptorLimit() {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
}

func median(_ values: [Double]) -> Double { values.isEmpty ? -1 : values.sorted()[values.count / 2] }

/// The host side: every figure, printed as `remote-<name> <value>` lines (milliseconds, KiB).
func remoteBenchmark(trials: Int) throws {
    raiseDescriptorLimit()
    // On PipeWire: the duck as heard, and the restore after SIGKILL as heard.
    let monitor = try Monitor()
    let scene = try Scene(streams: 1, name: "engine-load remote")
    guard scene.waitUntilPlaying() else { fail("the streams never started") }
    let clock = InputClock()
    scene.session.addInputObserver(clock)
    let path = "/tmp/engine-load-remote-\(getpid()).sock"
    let server = try SessionServer(session: scene.session, path: path)
    monitor.record(0.5)
    var local: [Double] = []
    var remote: [Double] = []
    var localCall: [Double] = []
    var remoteCall: [Double] = []
    var restoreHeardRemote: [Double] = []
    var restoreHeardLocal: [Double] = []
    var releasedAfterReap: [Double] = []
    var releasedAfterTearDown: [Double] = []
    for _ in 0..<trials {
        // In-process: the host's own call, and an OverlayAudioBridge torn down.
        monitor.reset()
        monitor.record(0.3)
        var before = monitor.level(mainTone, from: monitor.samples.count / 2 - 4800, frames: 4800)
        var mark = monitor.mark()
        let start = ContinuousClock.now
        let duck = scene.session.duck(owner: "bench")
        localCall.append(milliseconds(ContinuousClock.now - start))
        monitor.record(0.4)
        if let ms = monitor.reach(mainTone, atOrBelow: before - 19, from: mark) { local.append(ms) }
        duck.release()
        monitor.record(0.6)

        let bridge = OverlayAudioBridge(session: scene.session, owner: "in-process unit")
        bridge.requestAudioDucking()
        monitor.record(0.4)
        var ducked = monitor.level(mainTone, from: monitor.samples.count / 2 - 4800, frames: 4800)
        let held = scene.session.snapshot.ducks.map(\.id)
        mark = monitor.mark()
        let tornAt = ContinuousClock.now
        bridge.tearDown(reason: "bench")
        if let id = held.first, let at = clock.released(id) { releasedAfterTearDown.append(milliseconds(at - tornAt)) }
        monitor.record(0.7)
        if let ms = monitor.reachAbove(mainTone, atOrAbove: ducked + 0.1, from: mark) { restoreHeardLocal.append(ms) }

        // A unit in another process: its duck, then SIGKILL while it holds it.
        monitor.reset()
        let unit = Child(["remote-unit", path])
        guard unit.line() == "ready" else { fail("the unit did not connect") }
        monitor.record(0.3)
        before = monitor.level(mainTone, from: monitor.samples.count / 2 - 4800, frames: 4800)
        mark = monitor.mark()
        let granted = unit.ask("duck")
        if let value = Double(granted.split(separator: " ").last ?? "") { remoteCall.append(value) }
        monitor.record(0.4)
        if let ms = monitor.reach(mainTone, atOrBelow: before - 19, from: mark) { remote.append(ms) }
        ducked = monitor.level(mainTone, from: monitor.samples.count / 2 - 4800, frames: 4800)
        let unitDucks = scene.session.snapshot.ducks.map(\.id)
        unit.kill()
        let reapedAt = ContinuousClock.now
        mark = monitor.mark()
        monitor.record(0.7)
        if let id = unitDucks.first, let at = clock.released(id) {
            releasedAfterReap.append(milliseconds(at - reapedAt))
        }
        if let ms = monitor.reachAbove(mainTone, atOrAbove: ducked + 0.1, from: mark) { restoreHeardRemote.append(ms) }
    }
    report("remote-inprocess-call-ms", localCall)
    report("remote-unit-call-ms", remoteCall)
    report("remote-inprocess-duck-heard-ms", local)
    report("remote-unit-duck-heard-ms", remote)
    report("remote-teardown-released-ms", releasedAfterTearDown)
    report("remote-kill-released-ms", releasedAfterReap)
    report("remote-teardown-restore-heard-ms", restoreHeardLocal)
    report("remote-kill-restore-heard-ms", restoreHeardRemote)
    say("remote-quantum-ms \(format(Double(scene.engine.quantum) / 48))")
    server.close()
    scene.close()
    monitor.stop()

    // Offline: memory and duck latency with 1, 100 and 1000 units connected, beside as many
    // in-process bridges.
    for count in [1, 100, 1000] {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        _ = try session.openMainStream(source: SineSource(frequency: 440, amplitude: 0.5))
        let rssBefore = residentKiB()
        let bridges = (0..<count).map { OverlayAudioBridge(session: session, owner: "unit-\($0)") }
        for bridge in bridges { bridge.requestAudioDucking() }
        let rssBridges = residentKiB()
        let inProcess = hostDuckTimes(session)
        for bridge in bridges { bridge.tearDown() }
        let server = try SessionServer(session: session, path: path)
        let rssServer = residentKiB()
        let units = Child(["remote-many", path, "\(count)"])
        guard units.line() == "connected" else { fail("the units did not connect") }
        let rssConnected = residentKiB()
        let hostCall = hostDuckTimes(session)
        let unitCall = Double(units.ask("duck-times").split(separator: " ").last ?? "") ?? -1
        say(
            "remote-units \(count) inprocess-kib \(rssBridges - rssBefore) remote-kib \(rssConnected - rssServer) "
                + "inprocess-host-duck-us \(format(median(inProcess) * 1000)) remote-host-duck-us \(format(median(hostCall) * 1000)) "
                + "remote-unit-duck-us \(format(unitCall * 1000))")
        units.kill()
        server.close()
        session.close()
    }
}

/// The host's own duck(owner:) call → return, 200 times (milliseconds).
func hostDuckTimes(_ session: SharedSession) -> [Double] {
    (0..<200).map { _ in
        let start = ContinuousClock.now
        let duck = session.duck(owner: "host")
        let took = milliseconds(ContinuousClock.now - start)
        duck.release()
        return took
    }
}

/// One unit: connects, says "ready", and on "duck" ducks and answers "granted <ms>".
func remoteUnitChild(path: String) throws {
    let remote = try RemoteSession(path: path, owner: "voice-chat")
    say("ready")
    var held: [RemoteLease] = []
    while let line = readLine() {
        guard line == "duck" else { continue }
        let start = ContinuousClock.now
        held.append(try remote.duck())
        say("granted \(format(milliseconds(ContinuousClock.now - start) * 1000 / 1000))")
    }
}

/// N units in one process: connects them all, says "connected"; on "duck-times" the first one ducks
/// and releases 200 times and answers with the median round trip of duck() in milliseconds.
func remoteManyChild(path: String, count: Int) throws {
    raiseDescriptorLimit()
    let units = try (0..<count).map { try RemoteSession(path: path, owner: "unit-\($0)", timeout: .seconds(60)) }
    say("connected")
    while let line = readLine() {
        guard line == "duck-times" else { continue }
        let times = try (0..<200).map { _ in
            let start = ContinuousClock.now
            let lease = try units[0].duck()
            let took = milliseconds(ContinuousClock.now - start)
            try lease.release()
            return took
        }
        say("duck-ms \(String(format: "%.4f", median(times)))")
    }
}

extension Monitor {
    /// Milliseconds from `mark` to the centre of the first 10 ms window whose level of `frequency` is
    /// at or above `threshold`.
    func reachAbove(_ frequency: Double, atOrAbove threshold: Double, from mark: Int) -> Double? {
        var start = mark
        while start + 480 <= samples.count / 2 {
            if level(frequency, from: start, frames: 480) >= threshold { return Double(start + 240 - mark) / 48 }
            start += 48
        }
        return nil
    }
}
