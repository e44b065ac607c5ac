import Foundation
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

    static let scriptPath: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Scripts/pipewire-headless").path
    }()

    /// Runs the script with `argument`; returns its exit status and its stdout and stderr together.
    @discardableResult
    static func script(_ argument: String) -> (status: Int32, output: String) {
        run(scriptPath, [argument])
    }

    /// Makes sure the daemon is up (a test before may have killed it). Quick when it is.
    static func ensureRunning() throws {
        let result = script("start")
        try #require(result.status == 0, "Scripts/pipewire-headless start failed: \(result.output)")
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

    /// Runs a command from PATH or an absolute path and waits for it.
    @discardableResult
    static func run(_ command: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let process = Process()
        if command.hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [command] + arguments
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do {
            try process.run()
        } catch {
            return (-1, "\(error)")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Starts a command without waiting for it.
    static func launch(_ command: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Forces the graph's quantum (0 lifts the force), as `pw-metadata -n settings` does.
    static func forceQuantum(_ frames: Int) {
        run("pw-metadata", ["-n", "settings", "0", "clock.force-quantum", "\(frames)"])
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
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
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
