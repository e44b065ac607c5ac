import Foundation
import SharedSession

#if canImport(Glibc)
    import Glibc
#endif

/// The `remote-unit` executable, built by the package beside the test binary, run as a real process:
/// commands to its stdin, its answers read from its stdout with a deadline that fails loudly.
package final class UnitProcess {
    package let pid: Int32
    private let input: Int32
    private let output: Int32
    private var pending: [UInt8] = []
    package private(set) var reaped = false
    /// When `waitpid` returned for it.
    package private(set) var reapedAt: ContinuousClock.Instant?

    package static let executable = sibling("remote-unit")

    /// A command written to a process that died would raise SIGPIPE and end the whole test run; ignored,
    /// the write fails and the test reads why the process ended.
    private static let brokenPipesIgnored: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// An executable the package builds beside the test binary.
    package static func sibling(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path = String(decoding: buffer[0..<max(count, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (path as NSString).deletingLastPathComponent + "/" + name
    }

    /// Starts the unit (or `executable`) with `arguments`; `prefix` runs it through another program first
    /// (`setpriv ...`); `environment` adds to (or replaces in) this process's environment for it alone;
    /// `errorLog` is a file its standard error (and that of the processes it starts) goes to, else it
    /// shares this process's. With `ownProcessGroup`, it leads a process group of its own, which
    /// ``killGroup()`` kills whole, as a shell or a service manager kills a job.
    package init(
        _ arguments: [String], prefix: [String] = [], executable: String = UnitProcess.executable,
        environment: [String: String] = [:], errorLog: String? = nil, ownProcessGroup: Bool = false
    ) throws {
        Self.brokenPipesIgnored
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            throw SessionError(code: .fileError, message: "pipe failed: errno \(errno)")
        }
        // Only the dup2'd ends reach the child: no other unit inherits a pipe it would keep open.
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        if let errorLog {
            posix_spawn_file_actions_addopen(&actions, 2, errorLog, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        let argv = prefix + [executable] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        // This process's environment as it is now (the daemon's XDG_RUNTIME_DIR is set at run time).
        var variables: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let variable = String(cString: pointer)
            let name = variable.prefix { $0 != "=" }
            if environment[String(name)] == nil { variables.append(variable) }
            entry += 1
        }
        variables += environment.map { "\($0.key)=\($0.value)" }
        let cEnvironment = variables.map { strdup($0) } + [nil]
        defer { for pointer in cEnvironment { free(pointer) } }
        var child = pid_t()
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if ownProcessGroup {
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        let result = posix_spawnp(&child, argv[0], &actions, &attributes, &cArguments, cEnvironment)
        close(toChild[0])
        close(fromChild[1])
        guard result == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw SessionError(code: .fileError, message: "cannot start \(argv[0]): errno \(result)")
        }
        pid = child
        input = toChild[1]
        output = fromChild[0]
    }

    /// Writes one command line.
    package func send(_ command: String) {
        let bytes = Array((command + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
    }

    /// The next line the unit printed, waiting at most `timeout`; throws when none came.
    package func line(timeout: Duration = .seconds(10)) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = pending.firstIndex(of: 10) {
                defer { pending.removeSubrange(...newline) }
                return String(decoding: pending[..<newline], as: UTF8.self)
            }
            let left = deadline - .now
            guard left > .zero else {
                throw SessionError(code: .connectionLost, message: "unit \(pid) printed nothing within \(timeout)")
            }
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&poller, 1, max(milliseconds, 1)) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(output, &buffer, buffer.count)
            guard count > 0 else {
                throw SessionError(code: .connectionLost, message: "unit \(pid) closed its output")
            }
            pending += buffer[0..<count]
        }
    }

    /// The lines the process has printed by now, without waiting for more.
    package func linesWaiting() -> [String] {
        while true {
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else { break }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(output, &buffer, buffer.count)
            guard count > 0 else { break }
            pending += buffer[0..<count]
        }
        var lines: [String] = []
        while let newline = pending.firstIndex(of: 10) {
            lines.append(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
        return lines
    }

    /// Sends `command` and returns the answer line.
    @discardableResult
    package func ask(_ command: String, timeout: Duration = .seconds(10)) throws -> String {
        send(command)
        return try line(timeout: timeout)
    }

    /// Sends `command` to a `--raw` unit and returns the first line the host sent that is not an event.
    package func answer(_ command: String, timeout: Duration = .seconds(10)) throws -> String {
        send(command)
        return try nextAnswer(timeout: timeout)
    }

    /// The next line of a `--raw` unit that is not an event.
    package func nextAnswer(timeout: Duration = .seconds(10)) throws -> String {
        while true {
            let line = try line(timeout: timeout)
            if !line.hasPrefix(#"host {"event""#) { return line }
        }
    }

    /// SIGKILL; returns when the kernel has reaped the process (its sockets are closed by then).
    package func kill() {
        _ = Glibc.kill(pid, SIGKILL)
        reap()
    }

    /// SIGKILL to the process's whole group (it must have been started with `ownProcessGroup`): it and
    /// every process it started that stayed in its group die at once. Returns when it is reaped.
    package func killGroup() {
        _ = Glibc.kill(-pid, SIGKILL)
        reap()
    }

    /// Waits for the process to end.
    @discardableResult
    package func reap() -> Int32 {
        guard !reaped else { return 0 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reapedAt = .now
        reaped = true
        return status
    }

    deinit {
        if !reaped {
            _ = Glibc.kill(pid, SIGKILL)
            reap()
        }
        close(input)
        close(output)
    }
}

/// A socket path of its own for each test.
package func socketPath(_ name: String) -> String {
    "/tmp/ss-remote-\(getpid())-\(name).sock"
}

/// Waits until `condition` holds, failing loudly at the deadline.
package func waitUntil(
    _ what: String, timeout: Duration = .seconds(5), _ condition: () throws -> Bool
) throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            throw SessionError(code: .connectionLost, message: "timed out after \(timeout) waiting for \(what)")
        }
        usleep(200)
    }
}
