import Synchronization

/// Where a session reads the time: the continuous clock, or the times a replay reads from its
/// recording, so deadlines fall due at the same inputs as in the recorded run. `package`, with
/// ``ManualTime``: SharedSessionRecording's replayer makes its session on a manual clock.
package struct SessionClock: Sendable {
    /// The time now.
    package let now: @Sendable () -> ContinuousClock.Instant
    /// Whether the session wakes itself up at duck deadlines; a replay expires them where the
    /// recording says instead.
    let schedulesDeadlines: Bool

    /// The continuous clock, with deadline wake-ups.
    static let continuous = SessionClock(now: { .now }, schedulesDeadlines: true)

    /// A clock that reads `time`, which a replay sets before each input, with no wake-ups.
    package static func manual(_ time: ManualTime) -> SessionClock {
        SessionClock(now: { time.now }, schedulesDeadlines: false)
    }
}

/// A time a replay sets by hand: the recording's start plus the recorded offset of each input.
package final class ManualTime: Sendable {
    private let instant: Locked<ContinuousClock.Instant>

    package init(_ start: ContinuousClock.Instant) { instant = Locked(start) }

    var now: ContinuousClock.Instant { instant.withLock { $0 } }

    package func set(_ now: ContinuousClock.Instant) { instant.withLock { $0 = now } }
}
