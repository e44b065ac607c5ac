import Synchronization

/// Hands one producer's events to everyone listening at that moment: each stream made by
/// ``subscribe()`` and a ``handler``, on the thread that emits.
///
/// What is emitted before anyone listened is kept, the first `backlogLimit` items, and the ones past
/// the limit counted: a listener starts with them (the first one only, or every one, as
/// ``Replay`` says), followed by the element `lost` makes of the count. Items are kept as they came
/// (`Kept`, a remote host's raw line) and turned into what listeners get (`Element`, the decoded event)
/// by `transform` only when someone listens, so a producer nobody hears costs no decoding. After
/// ``finish(with:)`` every stream ends, with the final element first, and a stream asked for later
/// ends at once the same way.
package final class Broadcast<Kept: Sendable, Element: Sendable>: Sendable {
    /// Which listeners start with what was kept before anyone listened.
    package enum Replay: Sendable {
        /// The first listener takes the backlog; it is let go then.
        case toFirstListener
        /// Every listener starts with the backlog, which is kept for the producer's life.
        case toEveryListener
    }

    private struct State {
        var subscribers: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var handler: (@Sendable (Element) -> Void)?
        /// The items emitted before anyone listened, at most `backlogLimit`.
        var backlog: [Kept] = []
        /// The items emitted before anyone listened that the backlog had no room for.
        var lost = 0
        /// Whether anyone has listened: from then on items are not kept.
        var heard = false
        /// Whether ``finish(with:)`` was called, and with what.
        var finished = false
        var final: Element?
    }

    private let state = Locked(State())
    /// ``isListening`` as the lock last left it, set under the lock wherever the listeners change: a
    /// remote unit asks it for every line the host sends, and with a thousand units in one process a
    /// lock a line was a measurable share of their time.
    private let listening = Atomic<Bool>(false)
    private let backlogLimit: Int
    private let replay: Replay
    private let bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy
    private let transform: @Sendable (Kept) -> Element?
    private let lost: (@Sendable (Int) -> Element)?

    /// - Parameters:
    ///   - backlogLimit: How many items are kept before anyone listened.
    ///   - replay: Who starts with the kept items.
    ///   - bufferingPolicy: Each stream's buffer, for a listener that reads slower than items come.
    ///   - lost: The element a listener gets, after the backlog, for the items the backlog had no room
    ///     for; nil to count them silently.
    ///   - transform: What a listener gets for an item; nil drops it (a line that does not decode).
    package init(
        backlogLimit: Int, replay: Replay,
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded,
        lost: (@Sendable (Int) -> Element)? = nil,
        transform: @escaping @Sendable (Kept) -> Element?
    ) {
        self.backlogLimit = backlogLimit
        self.replay = replay
        self.bufferingPolicy = bufferingPolicy
        self.lost = lost
        self.transform = transform
    }

    /// A new stream of the events from now on, starting with the backlog if ``Replay`` gives it one.
    package func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: bufferingPolicy)
        let id: UInt64? = state.withLock { state in
            // The backlog goes in under the lock, so no item emitted meanwhile overtakes it.
            for element in takeBacklog(&state) { continuation.yield(element) }
            guard !state.finished else {
                if let final = state.final { continuation.yield(final) }
                continuation.finish()
                return nil
            }
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            publishListening(state)
            return state.nextSubscriber
        }
        if let id {
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { state in
                    state.subscribers.removeValue(forKey: id)
                    self?.publishListening(state)
                }
            }
        }
        return stream
    }

    /// Called with every event as it happens, after the backlog if ``Replay`` gives it one. Keep it
    /// short: the producer waits for it.
    package var handler: (@Sendable (Element) -> Void)? {
        get { state.withLock { $0.handler } }
        set {
            let backlog = state.withLock { state -> [Element] in
                state.handler = newValue
                defer { publishListening(state) }
                guard newValue != nil else { return [] }
                return takeBacklog(&state)
            }
            for element in backlog { newValue?(element) }
        }
    }

    /// Whether an item emitted now would be transformed and handed on: someone has listened, and a
    /// stream or a handler is there to take it. A caller that can make the element more cheaply itself
    /// asks first (a remote unit decodes an event line in the same pass as its envelope).
    package var isListening: Bool { listening.load(ordering: .acquiring) }

    /// Stores ``isListening`` from `state`; called under the lock after the listeners change.
    private func publishListening(_ state: State) {
        listening.store(state.heard && !(state.subscribers.isEmpty && state.handler == nil), ordering: .releasing)
    }

    /// Kept while nobody has listened; otherwise transformed and handed to the listeners of the
    /// moment, if there are any.
    package func emit(_ item: Kept) {
        let listeners = state.withLock { state -> Listeners? in
            guard state.heard else {
                if state.backlog.count < backlogLimit {
                    state.backlog.append(item)
                } else {
                    state.lost += 1
                }
                return nil
            }
            return Listeners(subscribers: Array(state.subscribers.values), handler: state.handler)
        }
        guard let listeners, !listeners.isEmpty, let element = transform(item) else { return }
        listeners.deliver(element)
    }

    /// Hands `element` to the listeners of the moment; it is never kept.
    package func send(_ element: Element) {
        let listeners = state.withLock { state in
            Listeners(subscribers: Array(state.subscribers.values), handler: state.handler)
        }
        listeners.deliver(element)
    }

    /// Ends every stream, with `final` as its last element; a stream asked for later gets the same.
    /// Only the first call counts.
    package func finish(with final: Element? = nil) {
        let subscribers = state.withLock { state -> [AsyncStream<Element>.Continuation] in
            guard !state.finished else { return [] }
            state.finished = true
            state.final = final
            defer {
                state.subscribers.removeAll()
                publishListening(state)
            }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers {
            if let final { continuation.yield(final) }
            continuation.finish()
        }
    }

    /// Marks the broadcast heard and returns what a new listener starts with: the kept items and the
    /// lost count, once (``Replay/toFirstListener``) or every time (``Replay/toEveryListener``).
    private func takeBacklog(_ state: inout State) -> [Element] {
        let first = !state.heard
        state.heard = true
        guard first || replay == .toEveryListener else { return [] }
        var elements = state.backlog.compactMap(transform)
        if state.lost > 0, let lost { elements.append(lost(state.lost)) }
        if replay == .toFirstListener {
            state.backlog = []
            state.lost = 0
        }
        return elements
    }

    /// The listeners of one moment, taken under the lock and called outside it.
    private struct Listeners {
        let subscribers: [AsyncStream<Element>.Continuation]
        let handler: (@Sendable (Element) -> Void)?

        var isEmpty: Bool { subscribers.isEmpty && handler == nil }

        func deliver(_ element: Element) {
            for continuation in subscribers { continuation.yield(element) }
            handler?(element)
        }
    }
}

extension Broadcast where Kept == Element {
    /// A broadcast that hands listeners the items as they were emitted.
    package convenience init(
        backlogLimit: Int, replay: Replay,
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded,
        lost: (@Sendable (Int) -> Element)? = nil
    ) {
        self.init(
            backlogLimit: backlogLimit, replay: replay, bufferingPolicy: bufferingPolicy, lost: lost,
            transform: { $0 })
    }
}
