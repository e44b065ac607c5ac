/// What a caller asks of the session: the one thing ``SessionState/apply(_:at:)`` takes.
///
/// A request carries no id the state gives. An acquire, a duck and a stream's opening are given
/// their ids by the state, in the step's ``SessionState/Outcome``; the road then records the request
/// with them, once, as the ``SessionInput`` the observers get (``recorded(as:)``). A replay turns each
/// record back into its request (``init(replaying:)``) and checks that the state gives the recorded
/// ids again.
enum SessionRequest: Sendable, Hashable {
    /// ``SharedSession/acquire(_:owner:)``.
    case acquire(AudioSessionType, owner: String)
    /// A session lease released (`dropped`: let go of without `release()`).
    case releaseLease(LeaseID, dropped: Bool)
    /// ``SharedSession/duck(_:)``, or one of its shorthands.
    case duck(DuckRequest)
    /// A duck or pause lease released (`dropped`: let go of without `release()`).
    case releaseDuck(LeaseID, dropped: Bool)
    /// Release the ducks whose deadline is due.
    case expireDeadlines
    /// ``SharedSession/setMainVolume(_:)``.
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
    /// A stream the engine opened, at the id ``SessionState/opening(_:isMain:volume:)`` gave it.
    case openStream(StreamDescriptor, owner: String?, volume: Float, isMain: Bool)
    /// A stream the engine refused to open: it spends the id it was given.
    case openStreamRefused(StreamDescriptor, message: String)
    /// Close a stream.
    case closeStream(StreamID)
    /// Set a stream's own volume.
    case setStreamVolume(StreamID, Float)
    /// A release with nothing to release.
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
    /// Checks the values the caller gave: volumes and duck levels finite and from 0 through 1, a
    /// loudness duck's margin from 0 through 40 LU, a maximum hold positive. The state refuses a request that fails before anything changes; a
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

    /// The request a recorded input was made of, without the ids the state gave it.
    init(replaying record: SessionInput) {
        switch record {
        case .acquire(let type, let owner, _): self = .acquire(type, owner: owner)
        case .releaseLease(let id, let dropped): self = .releaseLease(id, dropped: dropped)
        case .duck(let request, _): self = .duck(request)
        case .releaseDuck(let id, let dropped): self = .releaseDuck(id, dropped: dropped)
        case .expireDeadlines: self = .expireDeadlines
        case .setMainVolume(let volume): self = .setMainVolume(volume)
        case .play: self = .play
        case .pause: self = .pause
        case .suspend(let renderAnyway): self = .suspend(renderAnyway: renderAnyway)
        case .wakeFromSuspend: self = .wakeFromSuspend
        case .system(let event): self = .system(event)
        case .engine(let event): self = .engine(event)
        case .openStream(let descriptor, let owner, let volume, let isMain, _):
            self = .openStream(descriptor, owner: owner, volume: volume, isMain: isMain)
        case .openStreamRefused(let descriptor, let message): self = .openStreamRefused(descriptor, message: message)
        case .closeStream(let id): self = .closeStream(id)
        case .setStreamVolume(let id, let volume): self = .setStreamVolume(id, volume)
        case .ignoredRelease(let owner, let what, let cause):
            self = .ignoredRelease(owner: owner, what: what, cause: cause)
        case .rejected(let error): self = .rejected(error)
        case .activationOutcome(let configuration, let refused):
            self = .activationOutcome(configuration, refused: refused)
        case .captureOutcome(let refused): self = .captureOutcome(refused: refused)
        case .unitReleased(let owner, let reason): self = .unitReleased(owner: owner, reason: reason)
        case .close: self = .close
        }
    }
}
