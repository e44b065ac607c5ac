import Foundation
import NIOCore
import NIOExtras
import SharedSession

#if canImport(Glibc)
    import Glibc
#endif

/// One unit's connection on the host, confined to its event loop: checks the hello, hands each request
/// (a line ``RemoteProtocol``'s line framer cut) to the connection's `ConnectionExecutor`, where the
/// session is called under the connection's owner name, writes the answers in the order the requests
/// came, and has everything the unit held given back when the connection closes.
///
/// Reading pauses while the unit does not read what it is sent, or has `maximumInFlight` requests
/// not yet answered: NIO's back-pressure idiom, the `read` event held back until there is room.
final class UnitConnection: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The most requests of one unit queued or running on its executor before reading pauses.
    static let maximumInFlight = 16

    private enum Phase {
        case awaitingHello
        /// Welcomed, in the version of its hello: the host answers in it.
        case open(owner: String, version: Int)
        case closed
    }

    private let server: ServerContext
    private let connection: Int
    private var phase = Phase.awaitingHello
    private var context: ChannelHandlerContext?
    private var credentials: (pid: Int32, uid: UInt32, gid: UInt32)?
    /// The unit's session calls, from its accepted hello until the connection closed.
    private var executor: ConnectionExecutor?
    /// Requests handed to the executor and not yet answered.
    private var inFlight = 0
    /// A `read` held back until there is room (`mayRead`).
    private var readHeld = false
    private var violations = 0
    private var lostEvents = 0
    private var stallTimer: Scheduled<Void>?
    /// Why the connection is closing, once something decided it: the reason `unitReleased` names. From
    /// then on the unit's lines are not taken.
    private var closeReason: String?

    init(_ server: ServerContext) {
        self.server = server
        connection = server.registry.nextConnection()
        server.registry.live.add(1, ordering: .relaxed)
    }

    deinit { server.registry.live.subtract(1, ordering: .releasing) }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    /// Lets go of the context, which holds this handler: the two would keep each other alive.
    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        // The kernel's word on who connected, read once: a unit cannot change it afterwards.
        guard let provider = context.channel as? any SocketOptionProvider else { return }
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        credentials.assumeIsolated().whenSuccess { [self] value in
            self.credentials = (value.pid, value.uid, value.gid)
        }
        context.fireChannelActive()
    }

    /// One line, without its newline.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard closeReason == nil else { return }
        let line = unwrapInboundIn(data)
        guard line.readableBytes <= RemoteProtocol.maximumLineLength else {
            oversized()
            return
        }
        handle(line: Array(line.readableBytesView))
    }

    func channelInactive(context: ChannelHandlerContext) {
        stallTimer?.cancel()
        stallTimer = nil
        phase = .closed
        if let executor {
            // After the requests before it: a request in flight when the unit died is given back too.
            let reason = closeReason ?? "its connection closed"
            let admitted = server.admitted
            executor.submit { book in
                book.releaseEverything(reason: reason)
                admitted.leave()
            }
            self.executor = nil
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Once the connection is closing, what else goes wrong on it changes nothing.
        guard closeReason == nil else { return }
        switch error {
        case is ByteToMessageDecoderError.PayloadTooLargeError:
            oversized()
        case is NIOExtrasErrors.LeftOverBytesError:
            // The unit closed with a line unfinished: it went all the same.
            close(reason: "its connection closed")
        case let error as IOError where error.errnoCode == ECONNRESET || error.errnoCode == EPIPE:
            // A unit that exits with requests unread by the host resets the connection: it closed all the same.
            close(reason: "its connection closed")
        default:
            close(reason: "its connection failed: \(error)")
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stallTimer?.cancel()
            stallTimer = nil
            if lostEvents > 0 {
                write(.eventsLost(lostEvents))
                lostEvents = 0
            }
            // Reading paused while the unit did not read its replies: resume.
            resumeReading()
        } else {
            let limit = server.limits.stalledReadLimit
            stallTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(limit.inNanoseconds)) {
                [self] in
                close(reason: "it stopped reading its events for \(limit)")
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if mayRead {
            context.read()
        } else {
            readHeld = true
        }
    }

    /// Whether the unit's next lines may be read: it reads what it is sent, and its executor is not
    /// behind.
    private var mayRead: Bool {
        inFlight < Self.maximumInFlight && context?.channel.isWritable != false
    }

    private func resumeReading() {
        guard readHeld, mayRead, let context else { return }
        readHeld = false
        context.read()
    }

    // MARK: From other threads (through UnitHandle)

    func send(event line: ByteBuffer) {
        guard case .open = phase, let context else { return }
        if context.channel.isWritable {
            context.writeAndFlush(wrapOutboundOut(line), promise: nil)
        } else {
            lostEvents += 1
        }
    }

    /// Closes the connection now; the first reason given is the one `unitReleased` names.
    func close(reason: String) {
        if closeReason == nil { closeReason = reason }
        context?.close(promise: nil)
    }

    // MARK: Lines

    /// A line over the limit: what follows it cannot be trusted to be framed as the unit meant.
    private func oversized() {
        fail(
            RemoteProtocol.violation(
                "a line of more than \(RemoteProtocol.maximumLineLength) bytes: keep lines under the limit; "
                    + "the connection is closed (its framing is lost)"),
            reply: nil, closing: true)
    }

    private func handle(line: [UInt8]) {
        let message: UnitMessage
        do {
            message = try RemoteProtocol.readUnitLine(line, reading: reading)
        } catch {
            switch error {
            case .hostOnly where isAwaitingHello:
                requestBeforeHello()
            case .hostOnly(let refusal, let id):
                // Well-formed, so not counted among the unit's broken lines.
                fail(refusal, reply: id, closing: false)
            case .unreadable(let refusal, let id):
                violations += 1
                let closing = violations >= server.limits.violationsPerUnit || isAwaitingHello
                fail(refusal, reply: id, closing: closing)
            }
            return
        }
        switch (phase, message) {
        case (.awaitingHello, .hello(let version, let owner)):
            hello(version: version, owner: owner)
        case (.awaitingHello, .request):
            requestBeforeHello()
        case (.open, .hello):
            fail(RemoteProtocol.violation("a second hello on one connection"), reply: nil, closing: true)
        case (.open, .request(let id, let request)):
            submit { book in book.perform(request, id: id) }
        case (.closed, _):
            break
        }
    }

    /// How the unit's lines are read: before the hello, a request of any version is known as one.
    private var reading: UnitLineReading {
        switch phase {
        case .open(let owner, let version): UnitLineReading(version: version, owner: owner)
        case .awaitingHello, .closed: UnitLineReading(version: nil, owner: "")
        }
    }

    /// The version the host answers in: the hello's, once accepted (a refusal, and an error before the
    /// hello, have one shape in every version).
    private var version: Int {
        if case .open(_, let version) = phase { version } else { 1 }
    }

    private var isAwaitingHello: Bool {
        if case .awaitingHello = phase { true } else { false }
    }

    private func requestBeforeHello() {
        fail(
            RemoteProtocol.violation("a request before the hello: send {\"hello\": ...} first"), reply: nil,
            closing: true)
    }

    private func hello(version: Int, owner requested: String) {
        guard RemoteProtocol.supportedVersions.contains(version) else {
            let versions = RemoteProtocol.supportedVersions
            refuse(
                SessionError(
                    code: .accessRefused,
                    message:
                        "the unit speaks protocol version \(version), the host speaks version \(versions.lowerBound) "
                        + "to \(versions.upperBound): use a SharedSessionRemote that speaks one of them"))
            return
        }
        guard let credentials else {
            refuse(SessionError(code: .accessRefused, message: "the peer's credentials could not be read"))
            return
        }
        guard server.access.allowedUsers.contains(credentials.uid) else {
            refuse(
                SessionError(
                    code: .accessRefused,
                    message:
                        "uid \(credentials.uid) (pid \(credentials.pid)) may not join: the host serves "
                        + "uid \(server.access.allowedUsers.sorted().map(String.init).joined(separator: ", ")) only"))
            return
        }
        let asked = UnitCredentials(
            pid: credentials.pid, uid: credentials.uid, gid: credentials.gid, requestedOwner: requested)
        let owner: String
        do {
            owner = try server.access.ownerName(asked)
        } catch {
            refuse(error)
            return
        }
        guard let context else { return }
        let unit = ConnectedUnit(owner: owner, credentials: asked, connection: connection)
        let handle = UnitHandle(connection: NIOLoopBound(self, eventLoop: context.eventLoop))
        switch server.registry.claim(unit, handle: handle, maximum: server.limits.units) {
        case .failure(let error):
            refuse(error)
        case .success(let previous):
            phase = .open(owner: owner, version: version)
            server.admitted.enter()
            executor = ConnectionExecutor(
                pool: server.pool, book: UnitBook(server: server, connection: connection, owner: owner))
            write(
                .welcome(
                    Welcome(protocolVersion: version, owner: owner, connection: connection, previous: previous)))
        }
    }

    private func refuse(_ error: SessionError) {
        write(.refused(error))
        phase = .closed
        close(reason: "refused: \(error.message)")
    }

    /// Answers a line it could not take, after the answers to the lines before it; `closing` stops
    /// taking the unit's lines now and closes the connection after the answer.
    private func fail(_ error: SessionError, reply id: Int?, closing: Bool) {
        if closing, closeReason == nil { closeReason = "it broke the protocol: \(error.message)" }
        let outcome = UnitBook.Outcome.fail(error, reply: id, closing: closing)
        if inFlight == 0 {
            answer(outcome)
        } else {
            submit { _ in outcome }
        }
    }

    // MARK: Answers

    /// Runs `work` on the executor, after everything handed to it before, and acts on its outcome back
    /// on the event loop: answers are written in the order the requests came.
    private func submit(_ work: @escaping @Sendable (inout UnitBook) -> UnitBook.Outcome) {
        guard let executor, let context else { return }
        inFlight += 1
        let connection = NIOLoopBound(self, eventLoop: context.eventLoop)
        executor.submit { book in
            let outcome = work(&book)
            connection.eventLoop.execute {
                connection.value.inFlight -= 1
                connection.value.answer(outcome)
                connection.value.resumeReading()
            }
        }
    }

    private func answer(_ outcome: UnitBook.Outcome) {
        switch outcome {
        case .reply(let id, let reply):
            write(.reply(id: id, reply))
        case .left(let id):
            write(.reply(id: id, .done))
            close(reason: "it left")
        case .fail(let error, let id, let closing):
            if let id, !closing {
                write(.reply(id: id, .failed(error)))
            } else {
                write(.error(error, closing: closing))
            }
            if closing { close(reason: "it broke the protocol: \(error.message)") }
        case .nothing:
            break
        }
    }

    private func write(_ message: HostMessage) {
        guard let context else { return }
        let line = RemoteProtocol.encode(message, version: version)
        var buffer = context.channel.allocator.buffer(capacity: line.count)
        buffer.writeBytes(line)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }
}

/// `struct ucred` of `<sys/socket.h>` (only declared under `_GNU_SOURCE`, which Glibc's module does not
/// set): what `SO_PEERCRED` fills in.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
