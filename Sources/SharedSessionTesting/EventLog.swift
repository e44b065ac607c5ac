public import SharedSession

/// Every event something reported, in order, with a way to wait for the one a test expects.
///
/// Appending and reading are thread-safe, so a log can be fed from an engine's event handler, a
/// delegate or an `AsyncStream`. ``wait(timeout:after:for:)`` suspends until an event matching a
/// predicate has arrived (or is already in the log) and returns it, or returns nil when the
/// timeout passes first: no polling, no fixed sleeps.
///
/// ```swift
/// let log = EventLog(session: session)              // subscribes to session.events
/// let mark = log.count
/// session.handle(.interruptionBegan)
/// let began = await log.wait(after: mark) { $0.kind == .interruptionBegan }
/// #expect(began?.cause == .system(.interruptionBegan))
/// ```
public final class EventLog<Event: Sendable>: Sendable {
    private struct Waiter {
        let after: Int
        let predicate: @Sendable (Event) -> Bool
        let continuation: CheckedContinuation<Event?, Never>
    }

    private struct State {
        var events: [Event] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
        var subscription: Task<Void, Never>?
    }

    private let state = Locked(State())

    /// An empty log; feed it with ``append(_:)``.
    public init() {}

    deinit {
        state.withLock { $0.subscription?.cancel() }
    }

    /// Adds `event` at the end and wakes every waiter it matches.
    public func append(_ event: Event) {
        let woken: [CheckedContinuation<Event?, Never>] = state.withLock { state in
            state.events.append(event)
            let index = state.events.count - 1
            var woken: [CheckedContinuation<Event?, Never>] = []
            for (id, waiter) in state.waiters where index >= waiter.after && waiter.predicate(event) {
                woken.append(waiter.continuation)
                state.waiters[id] = nil
            }
            return woken
        }
        for continuation in woken { continuation.resume(returning: event) }
    }

    /// Every event so far, in order.
    public var all: [Event] { state.withLock { $0.events } }

    /// How many events the log holds: a mark to wait ``wait(timeout:after:for:)`` for what comes next.
    public var count: Int { state.withLock { $0.events.count } }

    /// How many calls of ``wait(timeout:after:for:)`` are suspended, waiting for an event that has not
    /// come yet: for a test that must append (or cancel) only once a wait has begun, instead of
    /// sleeping and hoping it has.
    public var pendingWaits: Int { state.withLock { $0.waiters.count } }

    /// The events so far that match `isIncluded`, in order.
    public func filter(_ isIncluded: (Event) -> Bool) -> [Event] {
        state.withLock { state in state.events }.filter(isIncluded)
    }

    /// The first event so far that matches `predicate`.
    public func first(where predicate: (Event) -> Bool) -> Event? {
        state.withLock { state in state.events }.first(where: predicate)
    }

    /// Whether an event so far matches `predicate`.
    public func contains(where predicate: (Event) -> Bool) -> Bool { first(where: predicate) != nil }

    /// Forgets every event so far (waiters keep waiting for new ones).
    public func removeAll() {
        state.withLock { state in
            state.events.removeAll()
            for id in Array(state.waiters.keys) {
                let waiter = state.waiters[id]!
                state.waiters[id] = Waiter(after: 0, predicate: waiter.predicate, continuation: waiter.continuation)
            }
        }
    }

    /// Waits for the first event at index `after` or later (0: any event of the log, already there or
    /// still to come) that matches `predicate`, and returns it; nil when `timeout` passes first or the
    /// waiting task is cancelled.
    public func wait(
        timeout: Duration = .seconds(5), after index: Int = 0, for predicate: @escaping @Sendable (Event) -> Bool
    ) async -> Event? {
        let id: UInt64 = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Event?, Never>) in
                let found: Event?? = state.withLock { state in
                    if index < state.events.count,
                        let event = state.events[max(index, 0)...].first(where: predicate)
                    {
                        return .some(event)
                    }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = Waiter(after: index, predicate: predicate, continuation: continuation)
                    return .none
                }
                if let found {
                    continuation.resume(returning: found)
                    return
                }
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.expire(id)
                }
            }
        } onCancel: {
            expire(id)
        }
    }

    /// Resumes waiter `id` with nil if it is still waiting.
    private func expire(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: nil)
    }

    /// Keeps `task` (a subscription feeding this log) until the log goes or ``stop()`` is called.
    fileprivate func keep(_ task: Task<Void, Never>) {
        state.withLock { $0.subscription = task }
    }

    /// Stops the subscription that ``init(session:)`` started; the events so far stay.
    public func stop() {
        let task = state.withLock { state in
            defer { state.subscription = nil }
            return state.subscription
        }
        task?.cancel()
    }
}

extension EventLog where Event == SessionEvent {
    /// A log of every event `session` emits from now on: it subscribes to `SharedSession.events`
    /// before returning, so nothing that happens after this line is missed. The subscription ends
    /// when the session closes, when ``stop()`` is called, or when the log goes away.
    public convenience init(session: SharedSession) {
        self.init()
        let events = session.events
        keep(
            Task { [weak self] in
                for await event in events {
                    guard let self else { return }
                    self.append(event)
                }
            })
    }

    /// The kinds of every event so far, in order.
    public var kinds: [SessionEvent.Kind] { all.map(\.kind) }

    /// Waits for an event of kind `kind` at index `after` or later; returns it, or nil after `timeout`.
    public func wait(
        for kind: SessionEvent.Kind, timeout: Duration = .seconds(5), after index: Int = 0
    ) async -> SessionEvent? {
        await wait(timeout: timeout, after: index) { $0.kind == kind }
    }
}

extension EventLog where Event: Equatable {
    /// Waits for an event equal to `event` at index `after` or later; returns it, or nil after `timeout`.
    public func wait(
        for event: Event, timeout: Duration = .seconds(5), after index: Int = 0
    ) async -> Event? {
        await wait(timeout: timeout, after: index) { $0 == event }
    }
}
