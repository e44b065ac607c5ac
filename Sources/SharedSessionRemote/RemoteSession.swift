import NIOCore
import NIOPosix
public import SharedSession
import Synchronization

/// A unit's side of a session served by a ``SessionServer`` in another process: leases, ducks of
/// every style, the snapshot and the event stream, as `SharedSession` gives them in-process, and
/// ``makeDelegate()`` for an SDK written against `OverlayAudioDelegate`.
///
/// Every call is one round trip on the socket (BENCHMARKS.md times it) and returns
/// when the host has applied it, so the host's state is what an in-process call would have left. Each
/// call comes in two forms: one that waits on the caller's thread, and an `async` one that suspends
/// instead (call that one from Swift concurrency, where waiting would hold a thread of the shared
/// pool). A waiting call on a NIO event loop thread would stall that loop or deadlock it, so there it
/// throws `invalidValue` and sends nothing; the delegate's calls, which cannot throw, send their
/// releases there without waiting. When the connection is lost, everything the unit held is gone on
/// the host; calls throw `connectionLost`, and a new `RemoteSession` starts from nothing (its
/// ``welcome`` says so, and what the last connection gave back).
///
/// ```swift
/// let remote = try RemoteSession(path: socketPath, owner: "watch-party")
/// let voice = try remote.acquire(.voice)
/// let duck = try remote.duck()
/// duck.release(); voice.release()
/// remote.leave()
///
/// // In Swift concurrency:
/// let unit = try await RemoteSession.connect(path: socketPath, owner: "voice-chat")
/// let lease = try await unit.duck()
/// try await lease.release()
/// ```
public final class RemoteSession: Sendable {
    /// What the host said when it accepted the connection: the owner name it gave, and whether an
    /// earlier connection under that name gave anything back.
    public let welcome: Welcome
    /// The socket's path.
    public let path: String
    /// How long a call waits for the host's reply before it throws `connectionLost`.
    public let timeout: Duration

    private let channel: any Channel
    private let host: NIOLoopBound<HostConnection>
    private let nextID = Atomic<Int>(1)
    let listeners: Listeners

    /// The owner name every lease of this unit carries (the host's choice).
    public var owner: String { welcome.owner }

    /// Connects to the server at `path` as `owner`, and waits for its welcome.
    ///
    /// - Throws: `SessionError` with code `accessRefused` if the host refused the unit (another
    ///   user, a name its policy does not allow or already connected, another protocol version: the
    ///   message names both), `connectionLost` if nothing answers at `path` within `timeout`, or
    ///   `invalidValue` on a NIO event loop thread (use ``connect(path:owner:timeout:)`` there).
    public convenience init(path: String, owner: String, timeout: Duration = .seconds(5)) throws(SessionError) {
        try Self.refuseToWaitOnEventLoop()
        self.init(try Self.wait(Self.open(path: path, owner: owner, timeout: timeout)), path: path, timeout: timeout)
    }

    /// Connects to the server at `path` as `owner`, and suspends until its welcome.
    ///
    /// - Throws: as ``init(path:owner:timeout:)``.
    public static func connect(path: String, owner: String, timeout: Duration = .seconds(5)) async throws(SessionError)
        -> RemoteSession
    {
        RemoteSession(try await result(open(path: path, owner: owner, timeout: timeout)), path: path, timeout: timeout)
    }

    private init(_ connection: Connection, path: String, timeout: Duration) {
        self.path = path
        self.timeout = timeout
        channel = connection.channel
        host = connection.host
        listeners = connection.listeners
        welcome = connection.welcome
    }

    /// Asks for a session of `type`, as `SharedSession/acquire(_:owner:)` does in-process.
    ///
    /// - Throws: `SessionError` as `acquire` throws it on the host (`activationRefused`,
    ///   `limitExceeded`), `limitExceeded` when the unit holds the host's limit of leases, or
    ///   `connectionLost`.
    public func acquire(_ type: AudioSessionType) throws(SessionError) -> RemoteLease {
        try lease(acquiring: type, try call(.acquire(type, owner: owner)))
    }

    /// Asks for a session of `type` and suspends until the host applied it.
    ///
    /// - Throws: as ``acquire(_:)``.
    public func acquire(_ type: AudioSessionType) async throws(SessionError) -> RemoteLease {
        try lease(acquiring: type, try await call(.acquire(type, owner: owner)))
    }

    /// Asks for a duck or pause of the main stream, as `SharedSession/duck(_:)` does in-process:
    /// every `DuckStyle` (a level, a pause, following voice activity) and a maximum hold.
    ///
    /// - Throws: `SessionError` as `duck(_:)` throws it on the host (`invalidValue`,
    ///   `unknownStream`, `limitExceeded`), or `connectionLost`.
    public func duck(_ style: DuckStyle = .duck(level: nil), maximumHold: Duration? = nil) throws(SessionError)
        -> RemoteLease
    {
        let request = DuckRequest(owner: owner, style: style, maximumHold: maximumHold)
        return try lease(ducking: style, try call(.duck(request)))
    }

    /// Asks for a duck or pause of the main stream and suspends until the host applied it.
    ///
    /// - Throws: as ``duck(_:maximumHold:)``.
    public func duck(_ style: DuckStyle = .duck(level: nil), maximumHold: Duration? = nil) async throws(SessionError)
        -> RemoteLease
    {
        let request = DuckRequest(owner: owner, style: style, maximumHold: maximumHold)
        return try lease(ducking: style, try await call(.duck(request)))
    }

    /// The session's state on the host now.
    ///
    /// - Throws: `SessionError` with code `connectionLost`.
    public func snapshot() throws(SessionError) -> SessionSnapshot {
        try snapshot(from: try call(.snapshot))
    }

    /// The session's state on the host now, without waiting on the caller's thread.
    ///
    /// - Throws: `SessionError` with code `connectionLost`.
    public func snapshot() async throws(SessionError) -> SessionSnapshot {
        try snapshot(from: try await call(.snapshot))
    }

    /// Every event of the host's session, then `disconnected` when the connection ends. Each access is
    /// a new stream from that moment on; the first one also starts with the events that came between
    /// the welcome and its creation (up to 1,024, then an `eventsLost` with the count of the rest).
    /// Events are decoded only while someone listens.
    public var events: AsyncStream<RemoteEvent> { listeners.subscribe() }

    /// Whether the connection is open.
    public var isConnected: Bool { channel.isActive }

    /// Leaves cleanly: the host gives back everything the unit holds (a `unitReleased` event naming
    /// the leave) and closes the connection. Does nothing once disconnected. On a NIO event loop
    /// thread it sends the leave without waiting, and the host closes the connection after it.
    public func leave() {
        guard !Self.isOnEventLoop else {
            post(.leave)
            return
        }
        _ = try? call(.leave)
        channel.close(promise: nil)
    }

    /// Leaves cleanly, as ``leave()`` does, suspending until the host applied it.
    public func leave() async {
        _ = try? await call(.leave)
        channel.close(promise: nil)
    }

    /// An `OverlayAudioDelegate` over this connection, for an SDK written against the contract.
    public func makeDelegate() -> RemoteOverlayDelegate { RemoteOverlayDelegate(session: self) }

    deinit { channel.close(promise: nil) }

    // MARK: Calls

    /// Sends `request` and waits for its reply; a refusal is thrown.
    func call(_ request: UnitRequest) throws(SessionError) -> Reply {
        try Self.refuseToWaitOnEventLoop()
        return try Self.granted(Self.wait(send(request)))
    }

    /// Sends `request` and suspends until its reply; a refusal is thrown.
    func call(_ request: UnitRequest) async throws(SessionError) -> Reply {
        try Self.granted(await Self.result(send(request)))
    }

    /// Sends `request` without waiting (a lease's release from its deinit, or from an event loop).
    func post(_ request: UnitRequest) {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let line = RemoteProtocol.encode(UnitMessage.request(id: id, request), version: RemoteProtocol.version)
        let host = host
        host.eventLoop.execute { host.value.send(line) }
    }

    /// Whether the calling thread is a NIO event loop's, where nothing may wait.
    static var isOnEventLoop: Bool { MultiThreadedEventLoopGroup.currentEventLoop != nil }

    /// Sends `request`; the future is its reply, or `connectionLost` once the connection is gone or
    /// `timeout` passed without a reply.
    private func send(_ request: UnitRequest) -> EventLoopFuture<Reply> {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let line = RemoteProtocol.encode(UnitMessage.request(id: id, request), version: RemoteProtocol.version)
        let promise = host.eventLoop.makePromise(of: Reply.self)
        let host = host
        let timeout = timeout
        host.eventLoop.execute {
            host.value.expect(id, promise, timeout: timeout)
            host.value.send(line)
        }
        return promise.futureResult
    }

    /// Connects, says hello, and completes with the welcome (or fails with the refusal).
    private static func open(path: String, owner: String, timeout: Duration) -> EventLoopFuture<Connection> {
        let listeners = Listeners()
        let hello = RemoteProtocol.encode(UnitMessage.hello(protocolVersion: RemoteProtocol.version, owner: owner))
        return ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.nanoseconds(timeout.inNanoseconds))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        RemoteProtocol.lineFramer(), HostConnection(listeners: listeners))
                }
            }
            .connect(unixDomainSocketPath: path)
            .flatMapErrorThrowing { error in
                throw SessionError(
                    code: .connectionLost, message: "cannot connect to a session server at \(path): \(error)")
            }
            .flatMap { channel in
                channel.eventLoop.flatSubmit {
                    let welcome = channel.eventLoop.makePromise(of: Welcome.self)
                    let handler: HostConnection
                    do {
                        handler = try channel.pipeline.syncOperations.handler(type: HostConnection.self)
                    } catch {
                        channel.close(promise: nil)
                        return channel.eventLoop.makeFailedFuture(
                            SessionError(code: .connectionLost, message: "the connection lost its handler: \(error)"))
                    }
                    handler.expectWelcome(welcome, timeout: timeout)
                    handler.send(hello)
                    let host = NIOLoopBound(handler, eventLoop: channel.eventLoop)
                    return welcome.futureResult.map { welcome in
                        Connection(channel: channel, host: host, listeners: listeners, welcome: welcome)
                    }.always { result in
                        if case .failure = result { channel.close(promise: nil) }
                    }
                }
            }
    }

    /// What a new connection is made of, once the host welcomed it.
    private struct Connection: Sendable {
        let channel: any Channel
        let host: NIOLoopBound<HostConnection>
        let listeners: Listeners
        let welcome: Welcome
    }

    static func refuseToWaitOnEventLoop() throws(SessionError) {
        guard !isOnEventLoop else {
            throw SessionError(
                code: .invalidValue,
                message:
                    "a RemoteSession call waits for the host, and a NIO event loop thread must never wait: "
                    + "call its async form there")
        }
    }

    private static func wait<Value: Sendable>(_ future: EventLoopFuture<Value>) throws(SessionError) -> Value {
        do {
            return try future.wait()
        } catch {
            throw sessionError(error)
        }
    }

    private static func result<Value: Sendable>(_ future: EventLoopFuture<Value>) async throws(SessionError) -> Value {
        do {
            return try await future.get()
        } catch {
            throw sessionError(error)
        }
    }

    private static func sessionError(_ error: any Error) -> SessionError {
        error as? SessionError
            ?? SessionError(code: .connectionLost, message: "the host's connection failed: \(error)")
    }

    /// The reply, or its refusal thrown.
    private static func granted(_ reply: Reply) throws(SessionError) -> Reply {
        if case .failed(let error) = reply { throw error }
        return reply
    }

    private func lease(acquiring type: AudioSessionType, _ reply: Reply) throws(SessionError) -> RemoteLease {
        guard case .granted(let id, let granted) = reply else { throw unexpected(reply) }
        return RemoteLease(id: id, kind: .session(granted ?? type), session: self)
    }

    private func lease(ducking style: DuckStyle, _ reply: Reply) throws(SessionError) -> RemoteLease {
        guard case .granted(let id, _) = reply else { throw unexpected(reply) }
        return RemoteLease(id: id, kind: .duck(style), session: self)
    }

    private func snapshot(from reply: Reply) throws(SessionError) -> SessionSnapshot {
        guard case .snapshot(let snapshot) = reply else { throw unexpected(reply) }
        return snapshot
    }

    private func unexpected(_ reply: Reply) -> SessionError {
        RemoteProtocol.violation("the host answered \(reply), which does not fit the request")
    }
}
