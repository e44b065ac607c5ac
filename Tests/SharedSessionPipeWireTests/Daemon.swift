import Foundation
import SharedSessionTestSupport
import Testing

/// The PipeWire daemon the tests run against, started (or found) once per test process through
/// the project's own `Scripts/pipewire-headless`.
enum Daemon {
    /// Nil when a daemon is reachable; otherwise why not.
    static let unavailableReason: String? = {
        let result = Daemon.script("start")
        guard result.status == 0 else {
            let reason = "no PipeWire daemon could be started: \(result.output)"
            print("SharedSessionPipeWireTests: skipping daemon tests: \(reason)")
            return reason
        }
        guard let line = result.output.split(separator: "\n").last(where: { $0.hasPrefix("export XDG_RUNTIME_DIR=") })
        else { return "Scripts/pipewire-headless start printed no XDG_RUNTIME_DIR: \(result.output)" }
        setenv("XDG_RUNTIME_DIR", String(line.dropFirst("export XDG_RUNTIME_DIR=".count)), 1)
        unsetenv("PIPEWIRE_REMOTE")
        return nil
    }()

    static var isAvailable: Bool { unavailableReason == nil }

    /// Whether the daemon is the script's private one (with its voice loopback and known pids), so a
    /// test may kill it, restart it or change its defaults. A desktop session's daemon is left alone.
    static var isPrivate: Bool { isAvailable && pids().pipewire != nil }

    /// Fails the test unless the daemon is the script's private one: the guard of the tests that
    /// change or kill it, for the CI run where their condition does not skip them.
    static func requirePrivate() throws {
        try #require(isPrivate, "the daemon is not the private one Scripts/pipewire-headless started")
    }

    static let scriptPath: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Scripts/pipewire-headless").path
    }()

    /// Runs the script with `argument`; returns its exit status and its stdout and stderr together.
    @discardableResult
    static func script(_ argument: String) -> (status: Int32, output: String) {
        let result = run(scriptPath, [argument])
        if result.output.contains("retrying") || result.output.contains("failed") {
            // A start that needed its second try: keep the first failure's reason in the test log.
            print("[daemon] Scripts/pipewire-headless \(argument):\n\(result.output)")
        }
        return result
    }

    /// Makes sure the daemon is up (a test before may have killed it). Quick when it is.
    static func ensureRunning() throws {
        try #require(unavailableReason == nil, "\(unavailableReason ?? "")")
        let result = script("start")
        try #require(result.status == 0, "Scripts/pipewire-headless start failed: \(result.output)")
    }

    /// The PipeWire the script runs: `SHAREDSESSION_PW_VERSION` as the script reads it ("system", the
    /// installed 0.3.65 with WirePlumber 0.4, or "1.4" with WirePlumber 0.5).
    static var version: String { ProcessInfo.processInfo.environment["SHAREDSESSION_PW_VERSION"] ?? "system" }

    /// The file the private daemon's WirePlumber saves stream state in: `restore-stream` (0.4) or
    /// `stream-properties` (0.5).
    static var streamStatePath: String {
        let base = ProcessInfo.processInfo.environment["SHAREDSESSION_PW_DIR"] ?? "/tmp/sharedsession-pw"
        return base + "/state/wireplumber/" + (version == "system" ? "restore-stream" : "stream-properties")
    }

    /// What the private daemon's WirePlumber saved for streams (``streamStatePath``): by "key:volume" and
    /// "key:channelVolumes", the saved value farthest from 1 (each channel's, for the channel volumes).
    /// WirePlumber 0.4 writes `key:volume=1.0` and `key:channelVolumes=0.1;0.1` lines, 0.5 one
    /// `key={"volume":1.0, "channelVolumes":[0.1, 0.1], ...}` line per key. Throws when the file is
    /// missing, so a check over what it holds cannot pass by reading nothing.
    static func savedStreamVolumes() throws -> [String: Float] {
        let text = try String(contentsOfFile: streamStatePath, encoding: .utf8)
        var saved: [String: Float] = [:]
        func keep(_ key: String, _ values: [Float]) {
            if let value = values.max(by: { abs($0 - 1) < abs($1 - 1) }) { saved[key] = value }
        }
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals])
            let value = line[line.index(after: equals)...]
            if value.hasPrefix("{") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(value.utf8)) as? [String: Any]
                else { continue }
                if let volume = object["volume"] as? Double { keep(key + ":volume", [Float(volume)]) }
                if let volumes = object["channelVolumes"] as? [Double] {
                    keep(key + ":channelVolumes", volumes.map { Float($0) })
                }
            } else if key.hasSuffix(":volume") || key.hasSuffix(":channelVolumes") {
                keep(key, value.split(separator: ";").compactMap { Float($0) })
            }
        }
        return saved
    }

    /// The pids of the private daemon's processes, if the script started them.
    static func pids() -> (pipewire: Int32?, wireplumber: Int32?) {
        let output = script("pids").output
        func value(_ key: String) -> Int32? {
            output.split(separator: " ").first { $0.hasPrefix("\(key)=") }
                .flatMap { Int32($0.dropFirst(key.count + 1).trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return (value("pipewire"), value("wireplumber"))
    }

    /// Runs a command (from PATH, or an absolute path) and waits for it; its output goes through a
    /// file. Spawned and reaped by hand (posix_spawn, waitpid): Foundation's Process relies on
    /// SIGCHLD delivery, which was seen to hang here when a command started the daemons.
    @discardableResult
    static func run(_ command: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let outputPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("sharedsession-run-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).txt").path
        defer { unlink(outputPath) }
        guard let pid = spawn(command, arguments, outputPath: outputPath) else {
            return (-1, "cannot start \(command)")
        }
        let status = wait(pid)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return (status, output)
    }

    /// A command running in the background; ``wait()`` reaps it.
    struct Child {
        let pid: pid_t
        func waitUntilExit() { _ = Daemon.wait(pid) }
    }

    /// Starts a command without waiting for it.
    static func launch(_ command: String, _ arguments: [String]) throws -> Child {
        guard let pid = spawn(command, arguments, outputPath: "/dev/null") else {
            throw POSIXError(.ENOENT)
        }
        return Child(pid: pid)
    }

    private static func spawn(_ command: String, _ arguments: [String], outputPath: String) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([command] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, command, &actions, nil, argv, environ)
        return result == 0 ? pid : nil
    }

    /// Waits for a child and returns its exit status (128 + signal if a signal ended it).
    fileprivate static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Forces the graph's quantum (0 lifts the force), as `pw-metadata -n settings` does.
    static func forceQuantum(_ frames: Int) {
        run("pw-metadata", ["-n", "settings", "0", "clock.force-quantum", "\(frames)"])
    }

    /// Makes a null sink named `name` in the daemon (stereo at 48 kHz, lingering after `pw-cli` exits),
    /// with `extra` properties; returns its node's id. Destroy it with `pw-cli destroy <id>`.
    static func createNullSink(named name: String, extra: String = "") throws -> Int {
        let created = run(
            "pw-cli",
            [
                "create-node", "adapter",
                "{ factory.name = support.null-audio-sink node.name = \(name) media.class = Audio/Sink "
                    + "object.linger = true audio.position = [ FL FR ] audio.rate = 48000 \(extra)}",
            ])
        try #require(created.status == 0, "pw-cli create-node: \(created.output)")
        // pw-cli returns before the node is in the registry: a pw-dump at once once missed it.
        let deadline = ContinuousClock.now + .seconds(2)
        var id = nodeID(named: name)
        while id == nil, ContinuousClock.now < deadline {
            usleep(20_000)
            id = nodeID(named: name)
        }
        return try #require(id, "the null sink \(name) did not appear within 2 s: \(created.output)")
    }

    /// The id of the node whose `node.name` is `name`, from pw-dump.
    static func nodeID(named name: String) -> Int? {
        let output = run("pw-dump", ["-N"]).output
        guard let objects = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]
        else { return nil }
        for object in objects {
            guard let info = object["info"] as? [String: Any], let props = info["props"] as? [String: Any],
                props["node.name"] as? String == name
            else { continue }
            return object["id"] as? Int
        }
        return nil
    }

    /// The node names of this process's streams.
    static func ownNodeNames() -> [String] {
        let output = run("pw-dump", ["-N"]).output
        guard let objects = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]
        else { return [] }
        return objects.compactMap { object in
            guard let info = object["info"] as? [String: Any], let props = info["props"] as? [String: Any],
                let name = props["node.name"] as? String, name.hasPrefix("sharedsession.\(getpid()).")
            else { return nil }
            return name
        }
    }

    /// Writes a 16-bit stereo 48 kHz WAV of a sine tone for pw-play.
    static func writeTone(frequency: Double, amplitude: Double, seconds: Double) throws -> URL {
        let frames = Int(seconds * 48_000)
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        data.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + frames * 4))
        data.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16)); append(UInt16(1)); append(UInt16(2))
        append(UInt32(48_000)); append(UInt32(48_000 * 4)); append(UInt16(4)); append(UInt16(16))
        data.append(contentsOf: Array("data".utf8)); append(UInt32(frames * 4))
        for frame in 0..<frames {
            let value = Int16((amplitude * sin(2 * Double.pi * frequency * Double(frame) / 48_000) * 32767).rounded())
            append(value); append(value)
        }
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sharedsession-tone-\(getpid())-\(Int(frequency)).wav")
        try data.write(to: url)
        return url
    }
}

extension Daemon {
    /// Makes `name` the configured default sink, or with `nil` lets the session manager choose again.
    static func setDefaultSink(_ name: String?) {
        if let name {
            run("pw-metadata", ["0", "default.configured.audio.sink", "{ \"name\": \"\(name)\" }", "Spa:String:JSON"])
        } else {
            run("pw-metadata", ["0", "default.configured.audio.sink", "-d"])
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// For tests that need a daemon: skipped, with this reason in the report, when none could be
    /// started outside CI; in CI they run and fail.
    static var needsDaemon: Self {
        .enabled(
            "needs a PipeWire daemon (Scripts/pipewire-headless start); in CI (CI=true) this runs and fails instead"
        ) { Requirements.all || Daemon.isAvailable }
    }

    /// For tests that change or kill the daemon: they run only against the private one that
    /// Scripts/pipewire-headless started, never a desktop session's; in CI they always run (the script's
    /// daemon is the one CI has) and fail if it is not there.
    static var privateDaemonOnly: Self {
        .enabled(
            "changes or kills the daemon: only the private one Scripts/pipewire-headless started; in CI this runs and fails instead"
        ) { Requirements.all || Daemon.isPrivate }
    }
}
