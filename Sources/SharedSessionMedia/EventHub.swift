import SharedSession

/// Delivers a source's events to its ``MediaFileSource/events`` subscribers and its handler, on
/// the thread that emits them (the decoder thread, or the thread making the source). Events emitted
/// before anyone listens (a damaged packet found while the source was made) are kept for the first
/// listener, up to a bound.
final class EventHub: Sendable {
    private struct State {
        var subscribers: [UInt64: AsyncStream<MediaEvent>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var handler: (@Sendable (MediaEvent) -> Void)?
        var backlog: [MediaEvent] = []
        var heard = false
    }

    private let state = Locked(State())
    private static let backlogLimit = 64

    func subscribe() -> AsyncStream<MediaEvent> {
        let (stream, continuation) = AsyncStream<MediaEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state -> UInt64 in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            if !state.heard {
                state.heard = true
                for event in state.backlog { continuation.yield(event) }
                state.backlog.removeAll()
            }
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
                guard !state.heard, newValue != nil else { return [] }
                state.heard = true
                defer { state.backlog.removeAll() }
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
