/// Everything that reaches a session, as a recording keeps it: every call with its owner, every
/// platform and engine event, and the outcome of every engine call the session made, each with the
/// ids the session gave (a lease's, a stream's). Replayed in order against a fresh session, these
/// reproduce its events exactly.
public enum SessionInput: Sendable, Hashable {
    /// ``SharedSession/acquire(_:owner:)``, and the id the lease was given.
    case acquire(AudioSessionType, owner: String, lease: LeaseID)
    /// A session lease released (`dropped`: let go of without `release()`).
    case releaseLease(LeaseID, dropped: Bool)
    /// ``SharedSession/duck(_:)`` (or one of its shorthands), and the id the lease was given: `nil` if
    /// the session refused the request (the unit's limits, a followed stream not open), which made no
    /// lease. A recording writes a refused request's lease as 0, an id no lease is given.
    case duck(DuckRequest, lease: LeaseID?)
    /// A duck or pause lease released (`dropped`: let go of without `release()`).
    case releaseDuck(LeaseID, dropped: Bool)
    /// The deadlines due at this time released their ducks.
    case expireDeadlines
    /// ``SharedSession/setMainVolume(_:)`` accepted.
    case setMainVolume(Float)
    /// ``SharedSession/play()``.
    case play
    /// ``SharedSession/pause()``.
    case pause
    /// ``SharedSession/suspend(renderAnyway:)``.
    case suspend(renderAnyway: Bool)
    /// ``SharedSession/wakeFromSuspend()``.
    case wakeFromSuspend
    /// ``SharedSession/handle(_:)``.
    case system(SystemEvent)
    /// An event the engine reported.
    case engine(EngineEvent)
    /// A stream opened, and the id it was given.
    case openStream(StreamDescriptor, owner: String?, volume: Float, isMain: Bool, stream: StreamID)
    /// A stream the engine refused to open.
    case openStreamRefused(StreamDescriptor, message: String)
    /// A stream closed.
    case closeStream(StreamID)
    /// A stream's own volume set.
    case setStreamVolume(StreamID, Float)
    /// A release with nothing to release (a second release, an unbalanced disable call).
    case ignoredRelease(owner: String, what: String, cause: EventCause)
    /// A request refused before it reached the state (an invalid value).
    case rejected(SessionError)
    /// The engine's answer to an activation: `nil` if it accepted, else its message.
    case activationOutcome(SessionConfiguration, refused: String?)
    /// The engine's answer to starting the voice capture: `nil` if it started, else its message.
    case captureOutcome(refused: String?)
    /// A unit's bridge gave back everything the unit held.
    case unitReleased(owner: String, reason: String)
    /// ``SharedSession/close()``.
    case close
}

/// Receives every ``SessionInput`` that reaches a session, in order, with the time it arrived: what a
/// recorder of the session attaches with ``SharedSession/addInputObserver(_:)``.
///
/// ## Implementation requirements
/// Called with the session's lane lock held, on the thread that made the call: return at once (append
/// to a buffer), and never call back into the session.
public protocol SessionInputObserver: AnyObject, Sendable {
    /// One input, at `time`.
    func session(_ session: SharedSession, received input: SessionInput, at time: ContinuousClock.Instant)

    /// One event the session emitted, at `time`: told right after the input that caused it, before
    /// the event reaches ``SharedSession/events`` and the delegate. Does nothing unless implemented.
    func session(_ session: SharedSession, emitted event: SessionEvent, at time: ContinuousClock.Instant)
}

extension SessionInputObserver {
    /// Ignores the event: an observer that only wants the inputs need not implement it.
    public func session(_ session: SharedSession, emitted event: SessionEvent, at time: ContinuousClock.Instant) {}
}
