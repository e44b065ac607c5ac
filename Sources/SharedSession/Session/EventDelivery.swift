import Synchronization

/// Delivers a session's events to its ``SharedSession/events`` subscribers and its delegate, in
/// order, with no lock held while they run.
///
/// Events are queued by the road of every input (``SharedSession``'s `perform`) and drained by the
/// thread that queued them; a delegate that calls back into the session queues more, which the same
/// thread delivers before it returns.
final class EventDelivery: Sendable {
    private struct State {
        var pending: [SessionEvent] = []
        var draining = false
        var subscribers: [UInt64: AsyncStream<SessionEvent>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        weak var delegate: (any SharedSessionDelegate)?

        var hasReceivers: Bool { !subscribers.isEmpty || delegate != nil }
    }

    private let state = Locked<State>(State())
    /// Whether a subscriber or a delegate is set: `State.hasReceivers` as of its last change, kept
    /// beside the lock so an input can ask without taking it (`RealtimeRenderTests.duckLockCount`:
    /// a duck takes no delivery lock when no one listens). A delegate that went away since still
    /// counts (its events are dropped at delivery).
    private let receiversSet = Atomic<Bool>(false)

    /// Whether an event made now has anyone to go to.
    var hasReceivers: Bool { receiversSet.load(ordering: .acquiring) }

    func subscribe() -> AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream<SessionEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state -> UInt64 in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            receiversSet.store(true, ordering: .releasing)
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            state.withLock { state in
                state.subscribers[id] = nil
                receiversSet.store(state.hasReceivers, ordering: .releasing)
            }
        }
        return stream
    }

    var delegate: (any SharedSessionDelegate)? {
        get { state.withLock { $0.delegate } }
        set {
            state.withLock { state in
                state.delegate = newValue
                receiversSet.store(state.hasReceivers, ordering: .releasing)
            }
        }
    }

    func enqueue(_ events: [SessionEvent]) {
        state.withLock { $0.pending.append(contentsOf: events) }
    }

    /// Finishes every subscriber's stream (the session closed).
    func finishSubscribers() {
        let subscribers = state.withLock { state in
            defer {
                state.subscribers.removeAll()
                receiversSet.store(state.hasReceivers, ordering: .releasing)
            }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Delivers the queued events, unless another thread is delivering (it delivers them too).
    func drain(from session: SharedSession) {
        var claimed = state.withLock { state -> Bool in
            guard !state.draining, !state.pending.isEmpty else { return false }
            state.draining = true
            return true
        }
        while claimed {
            let (batch, subscribers, delegate) = state.withLock { state in
                defer { state.pending.removeAll(keepingCapacity: true) }
                return (state.pending, Array(state.subscribers.values), state.delegate)
            }
            for event in batch {
                for subscriber in subscribers { subscriber.yield(event) }
                guard let delegate else { continue }
                delegate.session(session, didEmit: event)
                switch event.kind {
                case .interruptionBegan: delegate.sessionInterruptionBegan(session)
                case .interruptionEnded(let shouldResume):
                    delegate.sessionInterruptionEnded(session, shouldResume: shouldResume)
                case .routeChanged(let change): delegate.session(session, routeDidChange: change)
                default: break
                }
            }
            claimed = state.withLock { state -> Bool in
                if state.pending.isEmpty {
                    state.draining = false
                    return false
                }
                return true
            }
        }
    }
}
