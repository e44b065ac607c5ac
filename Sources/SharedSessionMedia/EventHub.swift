import SharedSession

/// Delivers a source's events to its ``MediaFileSource/events`` subscribers and its handler, on
/// the thread that emits them (the decoder thread, or the thread making the source).
///
/// Events emitted before anyone listened (a damaged packet found while the source was made, an end
/// reached before the host subscribed) are kept, the first 64, and every listener starts with them:
/// each new ``MediaFileSource/events`` sequence and each handler set, not only the first. Events
/// emitted once someone listens go to the listeners of that moment and are not kept.
final class EventHub: Sendable {
    private struct State {
        var subscribers: [UInt64: AsyncStream<MediaEvent>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var handler: (@Sendable (MediaEvent) -> Void)?
        /// The events emitted before anyone listened, at most `backlogLimit`.
        var backlog: [MediaEvent] = []
        /// Whether anyone has listened: from then on events are not kept.
        var heard = false
    }

    private let state = Locked(State())
    private static let backlogLimit = 64

    func subscribe() -> AsyncStream<MediaEvent> {
        let (stream, continuation) = AsyncStream<MediaEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state -> UInt64 in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            state.heard = true
            for event in state.backlog { continuation.yield(event) }
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    var handler: (@Sendable (MediaEvent) -> Void)? {
        get { state.withLock { $0.handler } }
        set {
            let backlog = state.withLock { state -> [MediaEvent] in
                state.handler = newValue
                guard newValue != nil else { return [] }
                state.heard = true
                return state.backlog
            }
            for event in backlog { newValue?(event) }
        }
    }

    func emit(_ event: MediaEvent) {
        let handler = state.withLock { state -> (@Sendable (MediaEvent) -> Void)? in
            if !state.heard {
                if state.backlog.count < Self.backlogLimit { state.backlog.append(event) }
                return nil
            }
            for continuation in state.subscribers.values { continuation.yield(event) }
            return state.handler
        }
        handler?(event)
    }

    func finish() {
        let subscribers = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }
}
