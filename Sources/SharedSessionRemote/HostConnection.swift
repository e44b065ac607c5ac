import NIOCore
import SharedSession

/// The unit's end of the connection, confined to its event loop: hands each of the host's lines (framed
/// by ``RemoteProtocol``'s line framer before it) to the call waiting for it or to the event listeners.
/// Nothing here waits: calls are completed through their promises, events yielded to their streams.
final class HostConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let listeners: Listeners
    private var context: ChannelHandlerContext?
    private var waiting: [Int: (promise: EventLoopPromise<Reply>, timer: Scheduled<Void>)] = [:]
    private var welcome: (promise: EventLoopPromise<Welcome>, timer: Scheduled<Void>)?
    private var lastError: SessionError?

    init(listeners: Listeners) { self.listeners = listeners }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    /// Lets go of the context, which holds this handler: the two would keep each other alive.
    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Completes `promise` with the host's welcome, or fails it after `timeout`.
    func expectWelcome(_ promise: EventLoopPromise<Welcome>, timeout: Duration) {
        guard let context else {
            promise.fail(SessionError(code: .connectionLost, message: "the host's connection is closed"))
            return
        }
        let timer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(timeout.inNanoseconds)) {
            [self] in
            welcome?.promise.fail(
                SessionError(code: .connectionLost, message: "no welcome from the host within \(timeout)"))
            welcome = nil
        }
        welcome = (promise, timer)
    }

    /// Completes `promise` with the reply to the request `id`, or fails it after `timeout` or when the
    /// connection closes.
    func expect(_ id: Int, _ promise: EventLoopPromise<Reply>, timeout: Duration) {
        guard let context, context.channel.isActive else {
            promise.fail(lastError ?? SessionError(code: .connectionLost, message: "the host's connection is closed"))
            return
        }
        let timer = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(timeout.inNanoseconds)) {
            [self] in
            let call = waiting.removeValue(forKey: id)
            call?.promise.fail(SessionError(code: .connectionLost, message: "no reply from the host within \(timeout)"))
        }
        waiting[id] = (promise, timer)
    }

    func send(_ line: [UInt8]) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: line.count)
        buffer.writeBytes(line)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        let message: HostMessage
        do {
            // Read once, by its shape; an event's value only while someone listens to events.
            let read = try RemoteProtocol.readHostLine(
                line.readableBytesView, version: RemoteProtocol.version, decodingEvents: listeners.isListening)
            guard case .message(let decoded) = read else {
                listeners.take(eventLine: line)
                return
            }
            message = decoded
        } catch {
            lastError = error
            context.close(promise: nil)
            return
        }
        switch message {
        case .welcome(let accepted):
            welcome?.timer.cancel()
            welcome?.promise.succeed(accepted)
            welcome = nil
        case .refused(let error):
            lastError = error
            welcome?.timer.cancel()
            welcome?.promise.fail(error)
            welcome = nil
        case .reply(let id, let reply):
            guard let call = waiting.removeValue(forKey: id) else { return }
            call.timer.cancel()
            call.promise.succeed(reply)
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
        welcome?.timer.cancel()
        welcome?.promise.fail(error)
        welcome = nil
        for call in waiting.values {
            call.timer.cancel()
            call.promise.fail(error)
        }
        waiting = [:]
        listeners.end(error)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is ByteToMessageDecoderError.PayloadTooLargeError {
            lastError = RemoteProtocol.violation(
                "a host line of more than \(RemoteProtocol.maximumLineLength) bytes is over the limit")
        }
        context.close(promise: nil)
    }
}
