import Dispatch
import SharedSession

/// Hands engine events to the session's handler on a serial queue of its own, so the handler runs
/// on a thread holding none of the engine's locks and never inside an engine method (the session
/// reacts by calling the engine again). Events keep the order they were emitted in.
final class EventDelivery: Sendable {
    private let queue: DispatchQueue
    private let handler = Locked<(@Sendable (EngineEvent) -> Void)?>(nil)

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func setHandler(_ handler: @escaping @Sendable (EngineEvent) -> Void) {
        self.handler.withLock { $0 = handler }
    }

    /// Queues `event`; returns at once.
    func emit(_ event: EngineEvent) {
        queue.async {
            let current = self.handler.withLock { $0 }
            current?(event)
        }
    }

    /// Waits until every event emitted before the call has been handled. Not for engine methods.
    func drain() {
        queue.sync {}
    }
}
