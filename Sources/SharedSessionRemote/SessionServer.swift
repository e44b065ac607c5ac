import Dispatch
import NIOCore
import NIOPosix
public import SharedSession
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Serves a `SharedSession` to units in other processes on a Unix domain socket.
///
/// The socket is made in the user's runtime directory (``RemoteProtocol/defaultSocketPath(name:)``) with mode 0600.
/// Each connection says hello with the protocol version and the owner name it asks for, and is answered in that version
/// (``RemoteProtocol/supportedVersions``); the server checks the peer's credentials from the kernel (`SO_PEERCRED`: its
/// uid and pid) against ``RemoteAccessPolicy``, which refuses other users and decides the owner name. From then on the
/// unit's requests are the session's own inputs, taken under that name within the host's per-unit limits, and the unit
/// receives every session event.
///
/// When a connection closes for any reason — the unit left, exited, crashed or was killed, or the
/// server closed it — everything it held is released at once (the main stream starts its restore
/// at the next render quantum) and the session emits `unitReleased` naming the reason.
///
/// One event loop thread serves every connection's socket; the session calls a unit's requests make
/// run on a small pool of threads of the server's own, each connection's in the order it sent them, as
/// a session call may wait for the engine and the loop must not.
///
/// ```swift
/// let server = try SessionServer(session: session, name: "my-player")
/// // units connect to server.path; later:
/// server.close()
/// ```
public final class SessionServer: Sendable {
    /// Limits on what one connection may hold and buffer.
    public struct Limits: Sendable, Hashable {
        /// The most leases (session and duck) one connection holds at once; more is `limitExceeded`.
        public var leasesPerUnit: Int = 64
        /// The most units connected at once; more are refused.
        public var units: Int = 4096
        /// The bytes of events buffered for a unit that does not read them: past this, events for it
        /// are dropped and counted, and it is told how many (`eventsLost`) when it reads again.
        public var eventBufferBytes: Int = 256 * 1024
        /// How long a unit may leave its buffer full before the server closes its connection (and gives
        /// back what it held).
        public var stalledReadLimit: Duration = .seconds(5)
        /// Malformed or unknown lines a connection may send before it is closed.
        public var violationsPerUnit: Int = 16

        /// The default limits.
        public init() {}
    }

    /// The session served.
    public let session: SharedSession
    /// The socket's path.
    public let path: String
    /// Who may connect, under which names.
    public let access: RemoteAccessPolicy
    /// What one connection may hold and buffer.
    public let limits: Limits

    private let group: MultiThreadedEventLoopGroup
    /// Where the units' session calls run (see `ConnectionExecutor`).
    private let pool: NIOThreadPool
    private let listener: any Channel
    /// The connections admitted whose releases have not run yet: ``close()`` waits for them.
    private let admitted = DispatchGroup()
    let registry: Registry
    private let fanOut: EventFanOut

    /// Serves `session` at `$XDG_RUNTIME_DIR/sharedsession-<name>.sock`.
    ///
    /// - Throws: `SessionError` with code `fileError` if the socket cannot be made (another host
    ///   serves there, the directory is missing).
    public convenience init(
        session: SharedSession, name: String, access: RemoteAccessPolicy = .sameUser(), limits: Limits = Limits()
    ) throws(SessionError) {
        try self.init(
            session: session, path: try RemoteProtocol.defaultSocketPath(name: name), access: access, limits: limits)
    }

    /// Serves `session` at the socket `path`.
    ///
    /// - Throws: `SessionError` with code `fileError` if the socket cannot be made.
    public init(
        session: SharedSession, path: String, access: RemoteAccessPolicy = .sameUser(), limits: Limits = Limits()
    ) throws(SessionError) {
        self.session = session
        self.path = path
        self.access = access
        self.limits = limits
        if Self.someoneListens(at: path) {
            throw SessionError(
                code: .fileError, message: "another server listens at \(path): stop it or choose another name")
        }
        let registry = Registry()
        self.registry = registry
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The loop that learns of a dead unit gives its duck back: on a loaded machine a thread of
        // normal priority can wait a whole render quantum to be scheduled. Like PipeWire's own main
        // loop (module-rt), it asks for nice -11; without the privilege (CAP_SYS_NICE, or RLIMIT_NICE)
        // the request fails and it stays as it was.
        // (On Linux the nice value is per thread: `who` 0 is the calling thread, the loop's.)
        group.next().execute { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -11) }
        // Two threads: a unit whose call waits for the engine leaves the other for the rest.
        pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        let context = ServerContext(
            session: session, access: access, limits: limits, registry: registry, pool: pool, admitted: admitted)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .childChannelOption(
                .writeBufferWaterMark,
                value: .init(low: limits.eventBufferBytes / 2, high: limits.eventBufferBytes)
            )
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        RemoteProtocol.lineFramer(), UnitConnection(context))
                }
            }
        do {
            listener = try bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).wait()
        } catch {
            try? group.syncShutdownGracefully()
            try? pool.syncShutdownGracefully()
            throw SessionError(code: .fileError, message: "cannot serve at \(path): \(error)")
        }
        guard chmod(path, 0o600) == 0 else {
            let code = errno
            try? listener.close().wait()
            try? group.syncShutdownGracefully()
            try? pool.syncShutdownGracefully()
            throw SessionError(code: .fileError, message: "chmod 0600 \(path) failed: errno \(code)")
        }
        fanOut = EventFanOut(loop: group.next(), registry: registry)
        session.addInputObserver(fanOut)
    }

    /// The units connected now, with their owner names and credentials.
    public var units: [ConnectedUnit] { registry.connected() }

    /// How many connection objects are alive, closed or not (`package`: the tests' leak check).
    package var liveConnections: Int { registry.live.load(ordering: .acquiring) }

    /// Stops accepting, closes every connection (each gives back what it held) and removes the socket.
    /// Safe to call more than once.
    public func close() {
        guard registry.markClosed() else { return }
        try? listener.close().wait()
        for unit in registry.openUnits() { unit.close(reason: "the host closed the server") }
        // Each closed connection's releases run on its executor, after its requests in flight, whose
        // answers go back through the loop: wait for them before stopping either. (A unit whose call
        // is stuck in the engine is not waited for forever.)
        _ = admitted.wait(timeout: .now() + .seconds(10))
        session.removeInputObserver(fanOut)
        try? group.syncShutdownGracefully()
        try? pool.syncShutdownGracefully()
        unlink(path)
    }

    deinit { close() }

    /// Whether a server answers at `path`.
    private static func someoneListens(at path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}

/// Passes every event of the session to every connected unit. Told by the session as each event is
/// emitted (an input observer: no Swift concurrency task that a busy cooperative pool could starve),
/// it hops to the server's event loop at once; there each event is encoded once and written to every
/// unit (the connections all live on that loop).
final class EventFanOut: SessionInputObserver {
    private let loop: any EventLoop
    private let registry: Registry

    init(loop: any EventLoop, registry: Registry) {
        self.loop = loop
        self.registry = registry
    }

    func session(_ session: SharedSession, received input: SessionInput, at time: ContinuousClock.Instant) {}

    func session(_ session: SharedSession, emitted event: SessionEvent, at time: ContinuousClock.Instant) {
        let registry = registry
        let loop = loop
        loop.execute {
            let units = registry.openUnits()
            guard !units.isEmpty else { return }
            // One buffer for every unit, of either version (an event line is the same in both): NIO
            // shares its storage among the writes.
            let line = ByteBuffer(bytes: RemoteProtocol.encode(HostMessage.event(event)))
            for unit in units { unit.send(event: line) }
        }
    }
}

/// A unit connected to a ``SessionServer``.
public struct ConnectedUnit: Sendable, Hashable {
    /// The owner name the host gave it.
    public let owner: String
    /// Its process id and user id, from the kernel.
    public let credentials: UnitCredentials
    /// The connection's number.
    public let connection: Int
}

/// What every connection of one server shares.
struct ServerContext: Sendable {
    let session: SharedSession
    let access: RemoteAccessPolicy
    let limits: SessionServer.Limits
    let registry: Registry
    /// Where the units' session calls run.
    let pool: NIOThreadPool
    /// Entered for each connection admitted, left once its releases ran.
    let admitted: DispatchGroup
}

/// The server's connections: who is connected under which name, and what the last connection under a
/// name gave back when it closed.
final class Registry: Sendable {
    private struct State {
        var nextConnection = 1
        var open: [Int: (unit: ConnectedUnit, handle: UnitHandle)] = [:]
        var owners: [String: Int] = [:]
        var previous: [String: String] = [:]
        var closed = false
        var accepted = 0
    }

    private let state = Locked(State())
    /// Connection objects alive (made and not yet deinitialised): a leak check for the tests.
    let live = Atomic<Int>(0)

    func nextConnection() -> Int {
        state.withLock { state in
            defer { state.nextConnection += 1 }
            return state.nextConnection
        }
    }

    /// Gives `owner` to a connection, or says why not; returns what the name's last connection gave back.
    func claim(_ unit: ConnectedUnit, handle: UnitHandle, maximum: Int) -> Result<String?, SessionError> {
        state.withLock { state in
            if state.closed {
                return .failure(SessionError(code: .accessRefused, message: "the host is closing its server"))
            }
            if let other = state.owners[unit.owner], let holder = state.open[other] {
                return .failure(
                    SessionError(
                        code: .accessRefused,
                        message:
                            "owner \"\(unit.owner)\" is connected already (pid \(holder.unit.credentials.pid)): "
                            + "one connection per owner; reconnect after it closed"))
            }
            if state.open.count >= maximum {
                return .failure(
                    SessionError(code: .accessRefused, message: "the host serves \(maximum) units already: try later"))
            }
            state.owners[unit.owner] = unit.connection
            state.open[unit.connection] = (unit, handle)
            state.accepted += 1
            return .success(state.previous[unit.owner])
        }
    }

    /// A connection closed after giving back what it held (`summary`).
    func remove(connection: Int, owner: String, summary: String) {
        state.withLock { state in
            guard state.open.removeValue(forKey: connection) != nil else { return }
            if state.owners[owner] == connection { state.owners[owner] = nil }
            state.previous[owner] = summary
        }
    }

    func openUnits() -> [UnitHandle] { state.withLock { $0.open.values.map(\.handle) } }
    func connected() -> [ConnectedUnit] {
        state.withLock { $0.open.values.map(\.unit).sorted { $0.connection < $1.connection } }
    }

    /// Marks the server closed; `false` if it was already.
    func markClosed() -> Bool {
        state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
    }
}

/// A connection as other threads reach it: every call hops to its event loop.
struct UnitHandle: Sendable {
    let connection: NIOLoopBound<UnitConnection>

    func send(event line: ByteBuffer) {
        let connection = connection
        if connection.eventLoop.inEventLoop {
            connection.value.send(event: line)
        } else {
            connection.eventLoop.execute { connection.value.send(event: line) }
        }
    }

    func close(reason: String) {
        let connection = connection
        connection.eventLoop.execute { connection.value.close(reason: reason) }
    }
}
