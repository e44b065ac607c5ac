/// One thing the session must do after a change of its state, in the order ``SessionState`` returns
/// them: a call on the engine or on a stream's control, or an event to deliver.
///
/// Two effects have an outcome the state needs before it can go on: ``activate(_:)`` and
/// ``startCapture``. Whoever performs them feeds the outcome back (``SessionState/activationSucceeded()``
/// or ``SessionState/activationFailed(_:)``, ``SessionState/captureStarted()`` or
/// ``SessionState/captureFailed(_:)``) and performs the effects that returns before anything else.
enum SessionEffect: Sendable, Hashable, CustomStringConvertible {
    /// Activate the session with a configuration, or switch the active session to it.
    case activate(SessionConfiguration)
    /// Put the engine back to the configuration it had (`nil`: inactive) after a switch that could not
    /// be completed; its outcome does not matter, the state already reports the old configuration.
    case restore(SessionConfiguration?)
    /// Deactivate the session.
    case deactivate(notifyingOthers: Bool)
    /// Start delivering voice input into the session's `voiceInput` ring.
    case startCapture
    /// Stop delivering voice input.
    case stopCapture
    /// Silence every stream, or let them play again.
    case setSuspended(Bool)
    /// Ramp a stream's gain.
    case setGain(StreamID, Float, ramp: Duration)
    /// Pause or resume a stream.
    case setPaused(StreamID, Bool)
    /// Make a stream go down to `gain` (never above its own) while any of `following` is active,
    /// decided per sample on the render side (no sources: no voice-activity duck), and as deep as the
    /// loudness duck that follows a source asks. `volume` is the host's, which scales a loudness
    /// duck's ceiling.
    case setActivityDuck(StreamID, gain: Float, volume: Float, following: [FollowedSource])
    /// Close a stream on the engine.
    case closeStream(StreamID)
    /// Deliver an event to the subscribers and the delegate.
    case emit(SessionEvent)

    var description: String {
        switch self {
        case .activate(let configuration): "activate(\(configuration))"
        case .restore(let configuration): "restore(\(configuration.map { "\($0)" } ?? "inactive"))"
        case .deactivate(let notifying): "deactivate(notifyingOthers: \(notifying))"
        case .startCapture: "startCapture"
        case .stopCapture: "stopCapture"
        case .setSuspended(let suspended): "setSuspended(\(suspended))"
        case .setGain(let id, let gain, let ramp): "setGain(\(id), \(gain), ramp: \(ramp))"
        case .setPaused(let id, let paused): "setPaused(\(id), \(paused))"
        case .setActivityDuck(let id, let gain, let volume, let followed):
            followed.contains { $0.loudness != nil }
                ? "setActivityDuck(\(id), \(gain), following: \(followed.map(\.source)), "
                    + "loudness: \(followed.map(\.loudness)), volume: \(volume))"
                : "setActivityDuck(\(id), \(gain), following: \(followed.map(\.source)))"
        case .closeStream(let id): "closeStream(\(id))"
        case .emit(let event): "emit(\(event))"
        }
    }

    /// The event, for an ``emit(_:)`` effect.
    var event: SessionEvent? {
        if case .emit(let event) = self { return event }
        return nil
    }
}
