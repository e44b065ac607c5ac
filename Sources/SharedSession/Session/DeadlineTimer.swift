import Dispatch

/// The wake-up that releases ducks at their deadline: a Dispatch timer of its own, so a busy Swift
/// concurrency pool cannot hold a forgotten duck past its deadline.
///
/// A later wake-up that finds an earlier one set does nothing; one that finds nothing due (its duck
/// was released in time) sets the next.
final class DeadlineTimer: Sendable {
    private struct State {
        var scheduled: ContinuousClock.Instant?
        var closed = false
    }

    private static let queue = DispatchQueue(label: "SharedSession.deadlines")
    private let state = Locked<State>(State())

    /// Schedules `fire` at `deadline`, unless an earlier wake-up is set or the timer is closed. With
    /// `runs` false (a replay's manual clock) the wake-up is only noted: the replay expires deadlines
    /// as the recording says.
    func schedule(
        at deadline: ContinuousClock.Instant, runs: Bool, _ fire: @escaping @Sendable (ContinuousClock.Instant) -> Void
    ) {
        let schedule = state.withLock { state -> Bool in
            if let scheduled = state.scheduled, scheduled <= deadline { return false }
            state.scheduled = deadline
            return true
        }
        guard schedule, runs else { return }
        let wait = max(.zero, deadline - .now)
        // A microsecond late rather than early, so the deadline has passed by the clock when it runs.
        Self.queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait.inNanoseconds) + 1000)) { fire(deadline) }
    }

    /// Whether the wake-up for `scheduled` is still the one set (and clears it): a wake-up superseded
    /// by an earlier one, or after ``close()``, does nothing.
    func claim(_ scheduled: ContinuousClock.Instant) -> Bool {
        state.withLock { state -> Bool in
            guard state.scheduled == scheduled, !state.closed else { return false }
            state.scheduled = nil
            return true
        }
    }

    func close() {
        state.withLock { $0.closed = true }
    }
}
