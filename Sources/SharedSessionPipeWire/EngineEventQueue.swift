import Dispatch
import SharedSession

/// Hands the engine's events to their handlers on one serial queue: the engine events to the
/// session's handler, the adoption events to the ``NodeAdoption``'s. A handler runs on a thread
/// holding none of the engine's locks and never inside an engine method (the session reacts by
/// calling the engine again). Events keep the order they were emitted in, across both kinds.
final class EngineEventQueue: Sendable {
    private struct Handlers {
        var engine: (@Sendable (EngineEvent) -> Void)?
        var adoption: (@Sendable (AdoptionEvent) -> Void)?
    }

    private let queue: DispatchQueue
    private let handlers = Locked(Handlers())

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func setHandler(_ handler: @escaping @Sendable (EngineEvent) -> Void) {
        handlers.withLock { $0.engine = handler }
    }

    func setAdoptionHandler(_ handler: (@Sendable (AdoptionEvent) -> Void)?) {
        handlers.withLock { $0.adoption = handler }
    }

    /// Queues `event` for the session; returns at once.
    func emit(_ event: EngineEvent) {
        queue.async {
            let current = self.handlers.withLock { $0.engine }
            current?(event)
        }
    }

    /// Queues `event` for the node adoption; returns at once.
    func emit(_ event: AdoptionEvent) {
        queue.async {
            let current = self.handlers.withLock { $0.adoption }
            current?(event)
        }
    }

    /// Waits until every event emitted before the call has been handled. Not for engine methods.
    func drain() {
        queue.sync {}
    }
}
