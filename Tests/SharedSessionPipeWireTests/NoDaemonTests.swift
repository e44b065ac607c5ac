import Foundation
import SharedSession
import SharedSessionPipeWireTesting
import Testing

@testable import SharedSessionPipeWire

/// Without a daemon the engine's error says where it looked and what a user can do on their own
/// machine: the library's users have none of this repository's scripts.
@Suite("PipeWireEngine without a daemon")
struct NoDaemonTests {
    @Test("without a daemon, the error names the runtime directory and socket it tried and how to start one")
    func errorNamesWhereItLookedAndWhatToDo() async throws {
        // In a child process of its own (an exit test): the runtime directory is process-wide, and the
        // other tests of this process use the daemon's.
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("sharedsession-no-daemon-\(getpid())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            setenv("XDG_RUNTIME_DIR", directory, 1)
            unsetenv("PIPEWIRE_RUNTIME_DIR")
            unsetenv("PIPEWIRE_REMOTE")
            do throws(SessionError) {
                let engine = try PipeWireEngine(applicationName: "no daemon")
                engine.shutdown()
                print("connected to a daemon in an empty runtime directory")
            } catch {
                print("directory: \(directory)")
                print("code: \(error.code)")
                print("message: \(error.message)")
            }
        }
        let output = String(decoding: result.standardOutputContent, as: UTF8.self)
        let lines = output.split(separator: "\n")
        let directory = try #require(lines.first { $0.hasPrefix("directory: ") }?.dropFirst("directory: ".count))
        let message = try #require(lines.first { $0.hasPrefix("message: ") }.map(String.init), "\(output)")
        #expect(lines.contains("code: \(SessionError.Code.engineUnavailable)"))
        #expect(message.contains("XDG_RUNTIME_DIR=\(directory)"))
        #expect(message.contains("\(directory)/pipewire-0"))
        #expect(message.contains("/run/pipewire/pipewire-0"))
        #expect(message.contains("systemctl --user start pipewire wireplumber"))
        #expect(message.contains("desktop session"))
        #expect(message.contains("Scripts/pipewire-headless start"))
        #expect(message.contains("offline engine"))
    }

    @Test("the socket is PipeWire's: remote name, else PIPEWIRE_REMOTE, else pipewire-0, in the runtime directory")
    func socketSearch() {
        let desktop = DaemonSocket(remoteName: nil) { ["XDG_RUNTIME_DIR": "/run/user/1000"][$0] }
        #expect(desktop.paths == ["/run/user/1000/pipewire-0", "/run/pipewire/pipewire-0"])
        #expect(desktop.searched.contains("XDG_RUNTIME_DIR=/run/user/1000"))
        let remote = DaemonSocket(remoteName: nil) {
            ["PIPEWIRE_RUNTIME_DIR": "/tmp/pw", "XDG_RUNTIME_DIR": "/run/user/1000", "PIPEWIRE_REMOTE": "other"][$0]
        }
        #expect(remote.paths == ["/tmp/pw/other", "/run/pipewire/other"])
        #expect(remote.searched.contains("PIPEWIRE_RUNTIME_DIR=/tmp/pw"))
        #expect(remote.searched.contains("from PIPEWIRE_REMOTE"))
        let named = DaemonSocket(remoteName: "mine") { ["PIPEWIRE_REMOTE": "other"][$0] }
        #expect(named.paths == ["/run/pipewire/mine"])
        #expect(named.searched.contains("XDG_RUNTIME_DIR is not set"))
        let absolute = DaemonSocket(remoteName: "/tmp/socket") { _ in nil }
        #expect(absolute.paths == ["/tmp/socket"])
    }

    @Test("without a daemon, a latency sink is a typed error that says what failed and how to start one")
    func latencySinkWithoutADaemon() async throws {
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("sharedsession-no-daemon-sink-\(getpid())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            setenv("XDG_RUNTIME_DIR", directory, 1)
            unsetenv("PIPEWIRE_RUNTIME_DIR")
            unsetenv("PIPEWIRE_REMOTE")
            do throws(SessionError) {
                let sink = try DeclaredLatencySink(
                    name: "pretend-headphones", target: "sink", delay: .milliseconds(200))
                sink.close()
                print("made a latency sink without a daemon")
            } catch {
                print("code: \(error.code)")
                print("message: \(error.message)")
            }
        }
        let output = String(decoding: result.standardOutputContent, as: UTF8.self)
        #expect(output.contains("code: \(SessionError.Code.engineUnavailable)"), "\(output)")
        #expect(output.contains("pretend-headphones could not be made: no PipeWire daemon to connect to"), "\(output)")
        #expect(output.contains("systemctl --user start pipewire"))
    }
}
