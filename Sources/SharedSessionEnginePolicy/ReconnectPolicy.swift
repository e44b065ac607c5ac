package import SharedSession

/// When to try to reach the daemon again after the connection broke, and what to report when it
/// comes back: a first attempt at once, then a delay growing by half each time from 100 ms to 2 s.
///
/// A plain value, driven by the engine's housekeeping with the time it runs at (the engine's timer is
/// armed for ``nextAttempt``); tested without a daemon.
package struct ReconnectPolicy: Sendable, Hashable {
    package static let initialDelay = Duration.milliseconds(100)
    package static let maximumDelay = Duration.seconds(2)

    /// When the connection was lost; `nil` while connected.
    package private(set) var lostAt: ContinuousClock.Instant?
    /// Attempts made since the loss.
    package private(set) var attempts = 0
    private var delay = initialDelay
    /// When the next attempt is due; nil while connected.
    package private(set) var nextAttempt: ContinuousClock.Instant?

    /// Connected: nothing lost yet.
    package init() {}

    /// Whether the engine is between a loss and a successful reconnection.
    package var isReconnecting: Bool { lostAt != nil }

    /// The connection broke at `now`: the first attempt may run at once.
    package mutating func lost(at now: ContinuousClock.Instant) {
        guard lostAt == nil else { return }
        lostAt = now
        attempts = 0
        delay = Self.initialDelay
        nextAttempt = now
    }

    /// The broken connection was torn down at `now`; the first attempt waits one delay, so the
    /// daemon's restart has a moment to begin.
    package mutating func tornDown(at now: ContinuousClock.Instant) {
        guard lostAt != nil else { return }
        nextAttempt = now + delay
    }

    /// Whether an attempt is due at `now`.
    package func isAttemptDue(at now: ContinuousClock.Instant) -> Bool {
        guard let nextAttempt else { return false }
        return now >= nextAttempt
    }

    /// An attempt at `now` failed: the next waits longer, up to ``maximumDelay``.
    package mutating func attemptFailed(at now: ContinuousClock.Instant) {
        guard lostAt != nil else { return }
        attempts += 1
        delay = min(delay * 1.5, Self.maximumDelay)
        nextAttempt = now + delay
    }

    /// An attempt at `now` reached the daemon: returns the event that reports it.
    package mutating func attemptSucceeded(at now: ContinuousClock.Instant) -> EngineEvent? {
        guard let lostAt else { return nil }
        attempts += 1
        let event = EngineEvent.reconnected(attempts: attempts, downtime: now - lostAt)
        self = ReconnectPolicy()
        return event
    }
}
