/// What every call of the C API returns: `sharedsession_statusOk`, or why it did nothing.
///
/// The codes after `sessionError` name a ``SessionError`` code of the Swift API; the message
/// (`sharedsession_last_error_message`) says what was wrong and how to fix it.
@c(sharedsession_status)
public enum Status: Int32, Sendable {
    case ok = 0
    /// The handle is 0, was never handed out, was released already, or belonged to a closed session.
    case invalidHandle = 1
    /// The handle is live but of another kind (a lease where a session was asked for).
    case wrongHandleKind = 2
    /// A required pointer was NULL, a string was not UTF-8, or a number was out of its range.
    case invalidArgument = 3
    /// The call needs the offline engine (rendering by hand) and the session runs on another.
    case notOffline = 4
    /// The call needs the PipeWire engine (adopting another client's nodes) and the session runs offline.
    case needsPipeWire = 5
    /// The session's own error: see the message.
    case sessionError = 100
    case engineUnavailable = 101
    case activationRefused = 102
    case streamRefused = 103
    case mainStreamAlreadyOpen = 104
    case fileError = 105
    case mediaUnreadable = 106
    case noAudioTrack = 107
    case limitExceeded = 108
    case sessionClosed = 109
    case invalidValue = 110
    case invalidConfiguration = 111
}

/// The engine a session plays on.
@c(sharedsession_engine)
public enum EngineKind: Int32, Sendable {
    /// Renders only when the host asks (`sharedsession_render`): tests, servers, no sound server.
    case offline = 0
    /// The PipeWire daemon of the user's session.
    case pipewire = 1
}

/// The kind of session a lease holds.
@c(sharedsession_lease_type)
public enum LeaseType: Int32, Sendable {
    /// Playback alongside the movie.
    case generic = 0
    /// Playback and recording (a voice chat); takes precedence over generic.
    case voice = 1
}

/// The platform's events the host passes on (`sharedsession_handle_event`).
@c(sharedsession_platform_event)
public enum PlatformEvent: Int32, Sendable {
    case interruptionBegan = 0
    /// The interruption ended and the platform says playback should resume.
    case interruptionEndedResume = 1
    /// The interruption ended and playback should not resume by itself.
    case interruptionEnded = 2
    case didEnterBackground = 3
    case willEnterForeground = 4
    case otherAudioStarted = 5
    case otherAudioStopped = 6
}
