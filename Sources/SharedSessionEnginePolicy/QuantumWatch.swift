package import SharedSession

/// When to look at the quantum the data thread last ran at, and when to report it.
///
/// The daemon tells a client nothing when it re-plans the graph at another quantum, and the data
/// thread cannot tell the loop either: waking it (`pw_loop_signal_event`) is an eventfd write, a
/// system call the real-time probe counts in the process callback. So the engine looks at the
/// quantum the data thread publishes when something that re-plans the graph has just happened (the
/// clock settings changed, a node came or went, one of its nodes changed state): every
/// ``settleInterval`` for ``settleWindow`` after such an event. Between events it looks every
/// ``quietInterval``, for the causes no event announces (another client changing its latency or
/// pausing its stream): the one timer left where PipeWire has no event.
///
/// A plain value, tested without a daemon.
package struct QuantumWatch: Sendable, Hashable {
    /// How often the quantum is read while the graph may be re-planning.
    package static let settleInterval = Duration.milliseconds(20)
    /// How long after an event the graph may take to run at its new quantum: a few cycles of the
    /// largest quantum (8192 frames, 171 ms), with room for a loaded machine.
    package static let settleWindow = Duration.seconds(1)
    /// How often the quantum is read when nothing announced a change.
    package static let quietInterval = Duration.seconds(2)

    /// The quantum last reported (0: none yet).
    package private(set) var reported = 0
    /// Until when reads are frequent.
    private var settlingUntil: ContinuousClock.Instant?
    /// When the quantum was last read.
    private var lastRead: ContinuousClock.Instant?

    /// Nothing reported or read yet.
    package init() {}

    /// Something that can change the quantum happened at `now`.
    package mutating func expectChange(at now: ContinuousClock.Instant) {
        settlingUntil = now + Self.settleWindow
    }

    /// Reads the quantum `frames` the data thread last ran at: the event to emit if it changed.
    package mutating func read(_ frames: Int, at now: ContinuousClock.Instant) -> EngineEvent? {
        lastRead = now
        if let settlingUntil, now >= settlingUntil { self.settlingUntil = nil }
        guard frames != 0, frames != reported else { return nil }
        reported = frames
        return .quantumChanged(frames: frames)
    }

    /// When to read next, with `playing` true while the engine has nodes the graph runs; nil: never
    /// (nothing plays, so nothing can change the quantum this engine reports).
    package func nextRead(after now: ContinuousClock.Instant, playing: Bool) -> ContinuousClock.Instant? {
        guard playing else { return nil }
        if let settlingUntil, now < settlingUntil { return (lastRead ?? now) + Self.settleInterval }
        return (lastRead ?? now) + Self.quietInterval
    }
}
