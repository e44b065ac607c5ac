import NIOCore
import NIOPosix
public import SharedSession
import Synchronization

/// A unit's side of a session served by a ``SessionServer`` in another process: leases, ducks of
/// every style, the snapshot and the event stream, as `SharedSession` gives them in-process, and
/// ``makeDelegate()`` for an SDK written against `OverlayAudioDelegate`.
///
/// Every call is one round trip on the socket (tens of microseconds on an idle machine) and returns
/// when the host has applied it, so the host's state is what an in-process call would have left. Do
/// not call from a NIO event loop: the call waits. When the connection is lost, everything the unit
/// held is gone on the host; calls throw `connectionLost`, and a new `RemoteSession` starts from
/// nothing (its ``welcome`` says so, and what the last connection gave back).
///
/// ```swift
/// let remote = try RemoteSession(path: socketPath, owner: "watch-party")
/// let voice = try remote.acquire(.voice)
/// let duck = try remote.duck()
/// duck.release(); voice.release()
/// remote.leave()
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
    ///   message names both), or `connectionLost` if nothing answers at `path` within `timeout`.
    public init(path: String, owner: String, timeout: Duration = .seconds(5)) throws(SessionError) {
        self.path = path
        self.timeout = timeout
        let listeners = Listeners()
        self.listeners = listeners
        let group = MultiThreadedEventLoopGroup.singleton
        let connected: (any Channel, NIOLoopBound<HostConnection>)
        do {
            let channel = try ClientBootstrap(group: group)
                .connectTimeout(.nanoseconds(timeout.nanoseconds))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HostConnection(listeners: listeners))
                    }
                }
                .connect(unixDomainSocketPath: path).wait()
            let handler = try channel.eventLoop.submit {
                NIOLoopBound(
                    try channel.pipeline.syncOperations.handler(type: HostConnection.self), eventLoop: channel.eventLoop
                )
            }.wait()
            connected = (channel, handler)
        } catch {
            throw SessionError(
                code: .connectionLost, message: "cannot connect to a session server at \(path): \(error)")
        }
        channel = connected.0
        host = connected.1
        let welcome = host.eventLoop.makePromise(of: Welcome.self)
        let hostConnection = host
        let hello = RemoteProtocol.encode(UnitMessage.hello(protocolVersion: RemoteProtocol.version, owner: owner))
        host.eventLoop.execute {
            hostConnection.value.expectWelcome(welcome)
            hostConnection.value.send(hello)
        }
        let timer = host.eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
            hostConnection.value.timeOut(nil, after: timeout)
        }
        do {
            defer { timer.cancel() }
            self.welcome = try Self.wait(welcome.futureResult)
        } catch {
            channel.close(promise: nil)
            throw error
        }
    }

    /// Asks for a session of `type`, as `SharedSession/acquire(_:owner:)` does in-process.
    ///
    /// - Throws: `SessionError` as `acquire` throws it on the host (`activationRefused`,
    ///   `limitExceeded`), `limitExceeded` when the unit holds the host's limit of leases, or
    ///   `connectionLost`.
    public func acquire(_ type: AudioSessionType) throws(SessionError) -> RemoteLease {
        let reply = try call(.acquire(type, owner: owner))
        guard case .granted(let id, let granted) = reply else { throw unexpected(reply) }
        return RemoteLease(id: id, kind: .session(granted ?? type), session: self)
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
        let reply = try call(.duck(request))
        guard case .granted(let id, _) = reply else { throw unexpected(reply) }
        return RemoteLease(id: id, kind: .duck(style), session: self)
    }

    /// The session's state on the host now.
    ///
    /// - Throws: `SessionError` with code `connectionLost`.
    public func snapshot() throws(SessionError) -> SessionSnapshot {
        let reply = try call(.snapshot)
        guard case .snapshot(let snapshot) = reply else { throw unexpected(reply) }
        return snapshot
    }

    /// Every event of the host's session, then `disconnected` when the connection ends. Each access is
    /// a new stream from that moment on; the first one also starts with the events that came between
    /// the welcome and its creation (up to 1,024, then an `eventsLost` with the count of the rest).
    /// Events are decoded only while someone listens.
    public var events: AsyncStream<RemoteEvent> { listeners.subscribe() }

    /// Whether the connection is open.
    public var isConnected: Bool { channel.isActive }

    /// Leaves cleanly: the host gives back everything the unit holds (a `unitReleased` event naming
    /// the leave) and closes the connection. Does nothing once disconnected.
    public func leave() {
        _ = try? call(.leave)
        channel.close(promise: nil)
    }

    /// An `OverlayAudioDelegate` over this connection, for an SDK written against the contract.
    public func makeDelegate() -> RemoteOverlayDelegate { RemoteOverlayDelegate(session: self) }

    deinit { channel.close(promise: nil) }

    // MARK: Calls

    /// Sends `request` and waits for its reply; a refusal is thrown.
    func call(_ request: UnitRequest) throws(SessionError) -> Reply {
        guard !host.eventLoop.inEventLoop else {
            throw SessionError(
                code: .invalidValue, message: "a RemoteSession call on its own event loop would wait forever")
        }
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let promise = host.eventLoop.makePromise(of: Reply.self)
        let line = RemoteProtocol.encode(UnitMessage.request(id: id, request))
        let host = host
        host.eventLoop.execute {
            host.value.expect(id, promise)
            host.value.send(line)
        }
        let timeout = timeout
        let timer = host.eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
            host.value.timeOut(id, after: timeout)
        }
        defer { timer.cancel() }
        let reply = try Self.wait(promise.futureResult)
        if case .failed(let error) = reply { throw error }
        return reply
    }

    /// Sends `request` without waiting (a lease's release from its deinit).
    func post(_ request: UnitRequest) {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let line = RemoteProtocol.encode(UnitMessage.request(id: id, request))
        let host = host
        host.eventLoop.execute { host.value.send(line) }
    }

    private static func wait<Value: Sendable>(_ future: EventLoopFuture<Value>) throws(SessionError) -> Value {
        do {
            return try future.wait()
        } catch let error as SessionError {
            throw error
        } catch {
            throw SessionError(code: .connectionLost, message: "the host's connection failed: \(error)")
        }
    }

    private func unexpected(_ reply: Reply) -> SessionError {
        RemoteProtocol.violation("the host answered \(reply), which does not fit the request")
    }
}

/// What a ``RemoteSession``'s event stream carries.
public enum RemoteEvent: Sendable, Hashable {
    /// An event of the host's session.
    case event(SessionEvent)
    /// The host dropped this many events because the unit did not read them: take a snapshot.
    case eventsLost(Int)
    /// The connection ended; everything the unit held is given back on the host.
    case disconnected(SessionError)
}

/// The event streams of one connection. Event lines are decoded only when someone listens: a unit
/// that never reads ``RemoteSession/events`` pays nothing for them. Until the first stream, the lines
/// are kept as they came (at most ``backlogLimit``; past it they are counted, and the first stream
/// starts with an `eventsLost`).
final class Listeners: Sendable {
    static let backlogLimit = 1024

    private struct State {
        var next = 0
        var continuations: [Int: AsyncStream<RemoteEvent>.Continuation] = [:]
        var ended: SessionError?
        /// The event lines from the welcome until the first stream: that stream starts with them.
        var backlog: [[UInt8]] = []
        var backlogLost = 0
        var subscribed = false
    }

    private let state = Locked(State())

    func subscribe() -> AsyncStream<RemoteEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: RemoteEvent.self, bufferingPolicy: .bufferingNewest(65_536))
        let (ended, backlog, lost): (SessionError?, [[UInt8]], Int) = state.withLock { state in
            guard state.ended == nil || !state.subscribed else { return (state.ended, [], 0) }
            let key = state.next
            state.next += 1
            state.continuations[key] = continuation
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.continuations.removeValue(forKey: key) }
            }
            guard !state.subscribed else { return (state.ended, [], 0) }
            state.subscribed = true
            defer {
                state.backlog = []
                state.backlogLost = 0
            }
            return (state.ended, state.backlog, state.backlogLost)
        }
        for line in backlog {
            if case .event(let event)? = try? RemoteProtocol.decodeHostLine(line) { continuation.yield(.event(event)) }
        }
        if lost > 0 { continuation.yield(.eventsLost(lost)) }
        if let ended {
            continuation.yield(.disconnected(ended))
            continuation.finish()
        }
        return stream
    }

    /// An `{"event": ...}` line from the host.
    func take(eventLine line: [UInt8]) {
        let listening = state.withLock { state in
            if !state.subscribed {
                if state.backlog.count < Self.backlogLimit {
                    state.backlog.append(line)
                } else {
                    state.backlogLost += 1
                }
            }
            return state.subscribed && !state.continuations.isEmpty
        }
        guard listening, case .event(let event)? = try? RemoteProtocol.decodeHostLine(line) else { return }
        yield(.event(event))
    }

    func yield(_ event: RemoteEvent) {
        let continuations = state.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    func end(_ error: SessionError) {
        let continuations = state.withLock { state in
            state.ended = state.ended ?? error
            defer { state.continuations = [:] }
            return Array(state.continuations.values)
        }
        for continuation in continuations {
            continuation.yield(.disconnected(error))
            continuation.finish()
        }
    }
}

/// The unit's end of the connection, confined to its event loop: frames the host's lines and hands
/// each to the call waiting for it or to the event listeners.
final class HostConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let listeners: Listeners
    private var context: ChannelHandlerContext?
    private var pending = ByteBuffer()
    private var waiting: [Int: EventLoopPromise<Reply>] = [:]
    private var welcome: EventLoopPromise<Welcome>?
    private var lastError: SessionError?

    init(listeners: Listeners) { self.listeners = listeners }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    /// Lets go of the context, which holds this handler: the two would keep each other alive.
    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func expectWelcome(_ promise: EventLoopPromise<Welcome>) { welcome = promise }

    func expect(_ id: Int, _ promise: EventLoopPromise<Reply>) {
        guard context?.channel.isActive == true else {
            promise.fail(lastError ?? SessionError(code: .connectionLost, message: "the host's connection is closed"))
            return
        }
        waiting[id] = promise
    }

    /// Fails the call `id` (the welcome when `nil`) if it is still waiting.
    func timeOut(_ id: Int?, after timeout: Duration) {
        let error = SessionError(
            code: .connectionLost, message: "no \(id == nil ? "welcome" : "reply") from the host within \(timeout)")
        if let id {
            waiting.removeValue(forKey: id)?.fail(error)
        } else {
            welcome?.fail(error)
            welcome = nil
        }
    }

    func send(_ line: [UInt8]) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: line.count)
        buffer.writeBytes(line)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        while let newline = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            guard let line = pending.readBytes(length: newline - pending.readerIndex) else { break }
            pending.moveReaderIndex(forwardBy: 1)
            handle(line)
        }
        pending.discardReadBytes()
    }

    /// How every event line starts (the host writes sorted keys, and an event line has only `event`).
    private static let eventPrefix = Array(#"{"event":"#.utf8)

    private func handle(_ line: [UInt8]) {
        if line.starts(with: Self.eventPrefix) {
            listeners.take(eventLine: line)
            return
        }
        let message: HostMessage
        do {
            message = try RemoteProtocol.decodeHostLine(line)
        } catch {
            lastError = error
            context?.close(promise: nil)
            return
        }
        switch message {
        case .welcome(let accepted):
            welcome?.succeed(accepted)
            welcome = nil
        case .refused(let error):
            lastError = error
            welcome?.fail(error)
            welcome = nil
        case .reply(let id, let reply):
            waiting.removeValue(forKey: id)?.succeed(reply)
        case .event(let event):
            listeners.yield(.event(event))
        case .eventsLost(let count):
            listeners.yield(.eventsLost(count))
        case .error(let error, _):
            lastError = error
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let error =
            lastError.map { SessionError(code: $0.code, message: "the host closed the connection: \($0.message)") }
            ?? SessionError(code: .connectionLost, message: "the connection to the host closed")
        welcome?.fail(error)
        welcome = nil
        for promise in waiting.values { promise.fail(error) }
        waiting = [:]
        listeners.end(error)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
