/// What a caller asks of the session: the one thing the session's state takes, each call, platform
/// event and engine event as one value.
///
/// A request carries no id the state gives: an acquire, a duck and a stream's opening are given
/// their ids by the state. A ``SessionInput`` is a request with what the state handed out for it, as
/// the session's observers (a recorder) receive it; a replay sends each recorded request again and
/// checks that the state hands out the recorded ids.
public enum SessionRequest: Sendable, Hashable {
    /// ``SharedSession/acquire(_:owner:)`` (the lease's id is handed out by the state).
    case acquire(AudioSessionType, owner: String)
    /// A session lease released (`dropped`: let go of without `release()`).
    case releaseLease(LeaseID, dropped: Bool)
    /// ``SharedSession/duck(_:)``, or one of its shorthands (the lease's id is handed out by the state,
    /// unless it refuses the request).
    case duck(DuckRequest)
    /// A duck or pause lease released (`dropped`: let go of without `release()`).
    case releaseDuck(LeaseID, dropped: Bool)
    /// Release the ducks whose deadline is due.
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
    /// A stream the engine opened (its id is handed out by the state).
    case openStream(StreamDescriptor, owner: String?, volume: Float, isMain: Bool)
    /// A stream the engine refused to open: it spends the id it was given.
    case openStreamRefused(StreamDescriptor, message: String)
    /// Close a stream.
    case closeStream(StreamID)
    /// Set a stream's own volume.
    case setStreamVolume(StreamID, Float)
    /// A release with nothing to release (a second release, an unbalanced disable call).
    case ignoredRelease(owner: String, what: String, cause: EventCause)
    /// A refusal decided outside the state (the engine refused a stream, the stream named is not
    /// open, the session is closed), or a recorded one replayed: reported and recorded as it is.
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

extension SessionRequest {
    /// Checks the values the caller gave: volumes and duck levels finite and from 0 through 1, a loudness duck's margin
    /// from 0 through 40 LU, a maximum hold positive. The state refuses a request that fails before anything changes; a
    /// stream's opening is checked before the engine is asked (``SessionState/opening(_:isMain:volume:)``).
    func validate() throws(SessionError) {
        switch self {
        case .duck(let request):
            if case .some(let level?) = request.style.requestedLevel {
                try SessionError.checkUnitInterval(level, name: "duck level")
            }
            if case .followLoudness(_, let margin?) = request.style {
                try LoudnessDuckPolicy.checkMargin(margin)
            }
            if let hold = request.maximumHold, hold <= .zero {
                throw SessionError.invalidValue(
                    "maximumHold", hold.inSeconds, fix: "give a positive duration, or nil")
            }
        case .setMainVolume(let volume):
            try SessionError.checkUnitInterval(volume, name: "mainVolume")
        case .setStreamVolume(_, let volume), .openStream(_, _, let volume, _):
            try SessionError.checkUnitInterval(volume, name: "stream volume")
        default:
            break
        }
    }
}
