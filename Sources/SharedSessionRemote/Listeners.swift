import NIOCore
import SharedSession

/// The unit's event streams (``RemoteSession/events``): the host's event lines from the welcome until
/// the first stream are kept, the first 1024, and that stream starts with them, decoded, followed by
/// an ``RemoteEvent/eventsLost(_:)`` for the lines past the limit. A line is decoded only when a
/// stream listens. When the connection ends every stream ends with ``RemoteEvent/disconnected(_:)``,
/// and so does a stream asked for later.
typealias Listeners = Broadcast<ByteBuffer, RemoteEvent>

extension Listeners {
    static var backlogLimit: Int { 1024 }

    convenience init() {
        self.init(
            backlogLimit: Self.backlogLimit, replay: .toFirstListener, bufferingPolicy: .bufferingNewest(65_536),
            lost: { .eventsLost($0) },
            transform: { line in
                guard case .event(let event)? = try? RemoteProtocol.decodeHostLine(line.readableBytesView) else {
                    return nil
                }
                return .event(event)
            })
    }

    /// An `{"event": ...}` line from the host.
    func take(eventLine line: ByteBuffer) { emit(line) }

    /// An event that is not kept for later streams.
    func yield(_ event: RemoteEvent) { send(event) }

    /// The connection ended with `error`.
    func end(_ error: SessionError) { finish(with: .disconnected(error)) }
}
