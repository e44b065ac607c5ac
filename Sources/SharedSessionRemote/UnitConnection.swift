import Foundation
import NIOCore
import SharedSession

#if canImport(Glibc)
    import Glibc
#endif

/// One unit's connection on the host, confined to its event loop: frames the lines, checks the
/// hello, turns each request into the session's own call under the connection's owner name, keeps
/// the leases it holds, and gives them all back when the connection closes.
final class UnitConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        case awaitingHello
        case open(owner: String)
        case closed
    }

    private enum Held {
        case session(SessionLease)
        case duck(DuckLease)
    }

    private let server: ServerContext
    private let connection: Int
    private var phase = Phase.awaitingHello
    private var context: ChannelHandlerContext?
    private var credentials: (pid: Int32, uid: UInt32, gid: UInt32)?
    private var pending = ByteBuffer()
    private var held: [LeaseID: Held] = [:]
    private var violations = 0
    private var lostEvents = 0
    private var stallTimer: Scheduled<Void>?
    /// Why the connection is closing, once something decided it: the reason `unitReleased` names.
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

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        while case .awaitingHello = phase, takeLine() {}
        while case .open = phase, takeLine() {}
        if closeReason == nil, pending.readableBytes > RemoteProtocol.maximumLineLength { oversized() }
        if pending.readableBytes == 0 { pending.clear() } else { pending.discardReadBytes() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        releaseEverything(reason: closeReason ?? "its connection closed")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A unit that exits with requests unread by the host resets the connection: it closed all the same.
        if let error = error as? IOError, error.errnoCode == ECONNRESET || error.errnoCode == EPIPE {
            close(reason: "its connection closed")
        } else {
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
            // Reading stopped while the unit did not read its replies: resume.
            context.channel.setOption(.autoRead, value: true).whenComplete { _ in }
        } else {
            context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
            let limit = server.limits.stalledReadLimit
            stallTimer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(limit.nanoseconds)) {
                [self] in
                close(reason: "it stopped reading its events for \(limit)")
            }
        }
        context.fireChannelWritabilityChanged()
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

    func close(reason: String) {
        guard let context, closeReason == nil else { return }
        closeReason = reason
        context.close(promise: nil)
    }

    // MARK: Lines

    /// Takes one complete line from `pending` and handles it; `false` when none is complete.
    private func takeLine() -> Bool {
        guard closeReason == nil,
            let newline = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n"))
        else { return false }
        let length = newline - pending.readerIndex
        guard length <= RemoteProtocol.maximumLineLength else {
            oversized()
            return false
        }
        guard let line = pending.readBytes(length: length) else { return false }
        pending.moveReaderIndex(forwardBy: 1)
        handle(line: line)
        return true
    }

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
            message = try RemoteProtocol.decodeUnitLine(line)
        } catch {
            violations += 1
            let closing = violations >= server.limits.violationsPerUnit || isAwaitingHello
            fail(error, reply: Self.requestID(in: line), closing: closing)
            return
        }
        switch (phase, message) {
        case (.awaitingHello, .hello(let version, let owner)):
            hello(version: version, owner: owner)
        case (.awaitingHello, .request):
            fail(
                RemoteProtocol.violation("a request before the hello: send {\"hello\": ...} first"), reply: nil,
                closing: true)
        case (.open, .hello):
            fail(RemoteProtocol.violation("a second hello on one connection"), reply: nil, closing: true)
        case (.open(let owner), .request(let id, let request)):
            perform(request, id: id, owner: owner)
        case (.closed, _):
            break
        }
    }

    private var isAwaitingHello: Bool {
        if case .awaitingHello = phase { true } else { false }
    }

    private func hello(version: Int, owner requested: String) {
        guard version == RemoteProtocol.version else {
            refuse(
                SessionError(
                    code: .accessRefused,
                    message:
                        "the unit speaks protocol version \(version), the host speaks version \(RemoteProtocol.version): "
                        + "use a SharedSessionRemote of the host's version"))
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
            phase = .open(owner: owner)
            write(
                .welcome(
                    Welcome(
                        protocolVersion: RemoteProtocol.version, owner: owner, connection: connection,
                        previous: previous)))
        }
    }

    private func refuse(_ error: SessionError) {
        write(.refused(error))
        phase = .closed
        close(reason: "refused: \(error.message)")
    }

    /// Answers a line it could not take; `closing` closes the connection after the answer.
    private func fail(_ error: SessionError, reply id: Int?, closing: Bool) {
        if let id, !closing {
            write(.reply(id: id, .failed(error)))
        } else {
            write(.error(error, closing: closing))
        }
        if closing {
            close(reason: "it broke the protocol: \(error.message)")
            pending.clear()
            if case .open = phase {} else { phase = .closed }
        }
    }

    /// The request id of a line that failed to decode, if one can be read, so the reply reaches the
    /// call that waits for it.
    private static func requestID(in line: [UInt8]) -> Int? {
        struct Id: Decodable { let id: Int }
        return try? JSONDecoder().decode(Id.self, from: Data(line)).id
    }

    // MARK: Requests

    private func perform(_ request: UnitRequest, id: Int, owner: String) {
        switch request {
        case .snapshot:
            write(.reply(id: id, .snapshot(server.session.snapshot)))
        case .leave:
            releaseEverything(reason: "it left")
            write(.reply(id: id, .done))
            close(reason: "it left")
        case .acquire, .duck, .input:
            do throws(SessionError) {
                write(.reply(id: id, try apply(request, owner: owner)))
            } catch {
                if error.code == .accessRefused {
                    // Acting under another name: nothing the connection says can be trusted.
                    fail(error, reply: nil, closing: true)
                } else {
                    write(.reply(id: id, .failed(error)))
                }
            }
        }
    }

    private func apply(_ request: UnitRequest, owner: String) throws(SessionError) -> Reply {
        let session = server.session
        let input: SessionInput
        switch request {
        case .acquire(let type, let asked):
            try check(asked, owner: owner)
            try checkRoom()
            let lease = try session.acquire(type, owner: owner)
            held[lease.id] = .session(lease)
            return .granted(lease.id, type: lease.type)
        case .duck(let request):
            try check(request.owner, owner: owner)
            try checkRoom()
            let lease = try session.duck(request)
            // `duck(_:)` throws when it refuses: the lease it returns has its id.
            guard let id = lease.id else { preconditionFailure("\(lease) refused, yet not thrown") }
            held[id] = .duck(lease)
            return .granted(id, type: nil)
        case .input(let sent): input = sent
        case .snapshot, .leave: preconditionFailure("perform answers \(request) itself")
        }
        switch input {
        case .releaseLease(let id, _):
            if case .session(let lease) = held[id] {
                held[id] = nil
                lease.release()
                return .done
            }
            return try releaseNotHeld(id, what: "releaseLease", owner: owner)
        case .releaseDuck(let id, _):
            if case .duck(let lease) = held[id] {
                held[id] = nil
                lease.release()
                return .done
            }
            return try releaseNotHeld(id, what: "releaseDuck", owner: owner)
        case .ignoredRelease(let asked, let what, _):
            try check(asked, owner: owner)
            session.ignoredRelease(owner: owner, what: what, cause: .unit(owner: owner))
            return .done
        default:
            throw RemoteProtocol.violation(
                "a unit may not send the input \(Self.kind(of: input)): only acquire, releaseLease, duck, "
                    + "releaseDuck and ignoredRelease; the rest is the host's")
        }
    }

    private func check(_ asked: String, owner: String) throws(SessionError) {
        guard asked == owner else {
            throw SessionError(
                code: .accessRefused,
                message:
                    "the connection of \"\(owner)\" asked to act as \"\(asked.prefix(80))\": a unit acts under the "
                    + "name the host gave it; the connection is closed")
        }
    }

    private func checkRoom() throws(SessionError) {
        let limit = server.limits.leasesPerUnit
        guard held.count < limit else {
            throw SessionError(
                code: .limitExceeded,
                message: "the unit holds \(limit) leases, the host's limit for a connection: release some first")
        }
    }

    /// A release of a lease this connection does not hold: someone else's is refused; one that is
    /// gone (released twice, expired, or from an earlier connection) is an ignored release.
    private func releaseNotHeld(_ id: LeaseID, what: String, owner: String) throws(SessionError) -> Reply {
        let snapshot = server.session.snapshot
        if snapshot.leases.contains(where: { $0.id == id }) || snapshot.ducks.contains(where: { $0.id == id }) {
            throw RemoteProtocol.violation(
                "\(what)(\(id)): lease \(id) is not this unit's; a unit releases only leases it was granted")
        }
        server.session.ignoredRelease(
            owner: owner, what: "\(what)(\(id)) of a lease it does not hold (released already)",
            cause: .unit(owner: owner))
        return .done
    }

    /// Releases everything the connection holds, once, and tells the session which unit went and why.
    @discardableResult
    private func releaseEverything(reason: String) -> String {
        guard case .open(let owner) = phase else {
            phase = .closed
            return ""
        }
        phase = .closed
        let leases = held.values
        held = [:]
        var sessions = 0
        var ducks = 0
        // Ducks first: the main stream starts its restore before any configuration change.
        for case .duck(let lease) in leases {
            lease.release()
            ducks += 1
        }
        for case .session(let lease) in leases {
            lease.release()
            sessions += 1
        }
        server.session.unitReleased(owner: owner, reason: reason, sessions: sessions, ducks: ducks)
        let summary = "\(sessions) session(s) and \(ducks) duck(s) given back: \(reason)"
        server.registry.remove(connection: connection, owner: owner, summary: summary)
        return summary
    }

    private func write(_ message: HostMessage) {
        guard let context else { return }
        let line = RemoteProtocol.encode(message)
        var buffer = context.channel.allocator.buffer(capacity: line.count)
        buffer.writeBytes(line)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    private static func kind(of input: SessionInput) -> String {
        let text = "\(input)"
        return String(text.prefix { $0 != "(" })
    }
}

/// `struct ucred` of `<sys/socket.h>` (only declared under `_GNU_SOURCE`, which Glibc's module does not
/// set): what `SO_PEERCRED` fills in.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
