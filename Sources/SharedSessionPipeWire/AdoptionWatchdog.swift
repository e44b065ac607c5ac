internal import CAdoptionWatchdog
import SharedSession

/// The process that gives adopted nodes back when the engine's process ends without doing so
/// (SIGKILL, a crash, an `exit` that skipped ``PipeWireEngine/shutdown()``).
///
/// Why a process: nothing a process does before it dies can undo a write to another client's node, and
/// PipeWire keeps a node's `Props` as they were last written whoever wrote them. A second process that
/// the engine tells of each node it ducks, and whose command pipe closes when the engine's process
/// ends however it ends, can: it is connected to the daemon, has each node bound and follows its
/// channel volumes (the user's), so the give-back is one `Props` write per node (its soft volumes set to
/// its channel volumes), confirmed by a round trip, a few milliseconds after the death. It runs this
/// library's own code (the executable is started again with a switch that a C constructor takes before
/// `main`; see `Sources/CAdoptionWatchdog/watchdog.c`), so there is nothing to install.
///
/// Used from the loop thread (or with the loop lock held); the command pipe is non-blocking.
final class AdoptionWatchdog {
    private let pid: pid_t
    private var commandFD: Int32
    /// The nodes it was told of and not yet told to forget.
    private(set) var watched: Set<UInt32> = []

    /// Starts the watchdog, or says why it cannot run.
    /// Its client declares `mediaCategory` as the engine's does (a sandboxed watchdog needs `Manager`
    /// to write the nodes' volumes as much as the engine does).
    static func start(remoteName: String?, mediaCategory: String? = nil) -> Result<AdoptionWatchdog, SessionError> {
        var fd: Int32 = -1
        var failure = [CChar](repeating: 0, count: 512)
        let pid = CAdoptionWatchdog_spawn(remoteName, mediaCategory, &fd, &failure, failure.count)
        guard pid > 0 else {
            let reason = String(decoding: failure.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(
                SessionError(
                    code: .engineUnavailable,
                    message: "the adoption watchdog could not be started (\(reason)); adopted nodes are given "
                        + "back when the engine shuts down, but not if this process dies first"))
        }
        return .success(AdoptionWatchdog(pid: pid, commandFD: fd))
    }

    private init(pid: pid_t, commandFD: Int32) {
        self.pid = pid
        self.commandFD = commandFD
    }

    /// The watchdog's process id (tests).
    var processID: pid_t { pid }

    /// `node`'s soft volumes are ours now: they are given back if this process dies.
    func adopted(_ node: UInt32) -> Int32 {
        guard watched.insert(node).inserted else { return 0 }
        return send("adopt \(node)\n")
    }

    /// `node` was given back or went away.
    func released(_ node: UInt32) {
        guard watched.remove(node) != nil else { return }
        _ = send("release \(node)\n")
    }

    /// Every node but `kept` is forgotten (the connection went away, and the nodes with it; those kept
    /// have a give-back the daemon has not confirmed, and are given back when the watchdog stops).
    func releaseAll(keeping kept: Set<UInt32> = []) {
        for node in watched.subtracting(kept).sorted() { released(node) }
    }

    /// Closes the command pipe and reaps the process; it gives back what it still holds first.
    func stop() {
        guard commandFD >= 0 else { return }
        CAdoptionWatchdog_stop(pid, commandFD)
        commandFD = -1
        watched.removeAll()
    }

    private func send(_ line: String) -> Int32 {
        guard commandFD >= 0 else { return -Int32(EBADF) }
        return CAdoptionWatchdog_send(commandFD, line)
    }
}

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif
