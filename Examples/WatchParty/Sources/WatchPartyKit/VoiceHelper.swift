import Foundation
import SharedSession
import SharedSessionRemote

#if canImport(Glibc)
    import Glibc
#endif

/// The voice-chat SDK running as a helper process (`watch-party-voice-helper`, built beside the
/// watch-party command): the host serves its session on a socket, the helper joins it as
/// "watch-party" and calls the delegate over it. Killing the helper (`voice-crash`) is how the scene
/// shows that a dead unit's duck does not outlive it.
final class VoiceHelper {
    private let server: SessionServer
    private let session: SharedSession
    private let pid: pid_t
    private let input: FileHandle
    private let output: FileHandle

    private init(server: SessionServer, session: SharedSession, pid: pid_t, input: FileHandle, output: FileHandle) {
        self.server = server
        self.session = session
        self.pid = pid
        self.input = input
        self.output = output
    }

    /// The helper executable, next to the running one (the watch-party command, or the tests).
    static var executable: String {
        let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (running as NSString).deletingLastPathComponent + "/watch-party-voice-helper"
    }

    /// Serves `session`, starts the helper and waits until it holds its voice session and duck.
    static func join(serving session: SharedSession, view: LiveView) throws -> VoiceHelper {
        let path = "/tmp/watch-party-\(getpid()).sock"
        let server = try SessionServer(session: session, path: path)
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            throw SessionError(code: .fileError, message: "pipe failed for the voice helper")
        }
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        let words: [String] = [executable, "--socket", path]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            server.close()
            throw SessionError(
                code: .fileError,
                message: "cannot start \(executable) (errno \(spawned)): build the WatchParty package's products")
        }
        let helper = VoiceHelper(
            server: server, session: session, pid: pid,
            input: FileHandle(fileDescriptor: toChild[1], closeOnDealloc: true),
            output: FileHandle(fileDescriptor: fromChild[0], closeOnDealloc: true))
        let answer = helper.line()
        guard answer == "joined" else {
            helper.terminate()
            throw SessionError(code: .connectionLost, message: "the voice helper did not join: \(answer)")
        }
        view.note("voice helper (pid \(pid)) joined through \(path)")
        return helper
    }

    /// Asks the helper to leave the call and waits for it to exit.
    func leave() throws {
        input.write(Data("leave\n".utf8))
        _ = line()
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        try waitUntilReleased()
        server.close()
    }

    /// SIGKILL mid-call; returns once the host has given back what the helper held.
    func kill() throws {
        terminate()
        try waitUntilReleased()
        server.close()
    }

    private func terminate() {
        _ = Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    /// The host learns of the close on its server's thread: the offline render waits for it, so the
    /// marks after a crash read the same on every run.
    private func waitUntilReleased() throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while session.snapshot.ducks.contains(where: { $0.owner == "watch-party" })
            || session.snapshot.leases.contains(where: { $0.owner == "watch-party" })
        {
            guard ContinuousClock.now < deadline else {
                throw SessionError(code: .connectionLost, message: "the voice helper's leases were not given back")
            }
            usleep(500)
        }
    }

    private func line() -> String {
        var bytes: [UInt8] = []
        while true {
            let chunk = output.readData(ofLength: 1)
            guard let byte = chunk.first else { return String(decoding: bytes, as: UTF8.self) }
            if byte == 10 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}
