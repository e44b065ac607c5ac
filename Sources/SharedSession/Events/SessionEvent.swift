/// Something that changed in the session, with what caused it.
///
/// Every lease, every configuration change, every change of the main stream's volume, gain or play
/// state, every system event and every engine fault is one event. Subscribe with
/// ``SharedSession/events`` or a ``SharedSessionDelegate``; both receive every event in order.
public struct SessionEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public let kind: Kind
    /// Why: which lease, which host call, which system or engine event.
    public let cause: EventCause

    /// Creates an event.
    public init(_ kind: Kind, cause: EventCause) {
        self.kind = kind
        self.cause = cause
    }

    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// A session lease was granted (after its configuration was active).
        case leaseAcquired(LeaseInfo)
        /// A session lease was given back by `release()`.
        case leaseReleased(LeaseInfo)
        /// A session lease was dropped without `release()`: its owner went away.
        case leaseDropped(LeaseInfo)
        /// A duck or pause request started.
        case duckAcquired(DuckInfo)
        /// A duck or pause request ended by `release()`.
        case duckReleased(DuckInfo)
        /// A duck or pause lease was dropped without `release()`.
        case duckDropped(DuckInfo)
        /// A release that had nothing to release (a second release, an unbalanced disable call).
        case releaseIgnored(owner: String, what: String)
        /// The session became active with a configuration.
        case activated(SessionConfiguration)
        /// The active session switched configuration (voice to generic and back).
        case configurationChanged(from: SessionConfiguration, to: SessionConfiguration)
        /// The session became inactive.
        case deactivated(notifiedOthers: Bool)
        /// The engine refused a configuration; the leases that needed it were not granted.
        case activationFailed(SessionConfiguration, message: String)
        /// The host's own volume changed.
        case mainVolumeChanged(from: Float, to: Float)
        /// The main stream's gain target changed (host volume × duck × mutes).
        case mainGainChanged(from: Float, to: Float)
        /// The main stream paused or resumed.
        case mainPlaybackChanged(isPaused: Bool)
        /// An interruption began: rendering is suspended.
        case interruptionBegan
        /// An interruption ended (or was lifted by the foreground or the host).
        case interruptionEnded(shouldResume: Bool)
        /// The route changed.
        case routeChanged(RouteChange)
        /// Rendering was suspended (`true`) or woke (`false`).
        case renderingSuspended(Bool)
        /// The app went to the background (`true`) or came back (`false`).
        case backgroundChanged(isInBackground: Bool)
        /// Another app's audio started or stopped.
        case otherAudioChanged(isPlaying: Bool)
        /// Streams marked as background music were muted (`true`) or unmuted.
        case backgroundMusicMuted(Bool)
        /// A stream was opened.
        case streamOpened(StreamInfo)
        /// A stream was closed.
        case streamClosed(StreamInfo)
        /// An overlay stream's own volume changed.
        case streamVolumeChanged(StreamID, from: Float, to: Float)
        /// A stream failed to play or stopped without being asked.
        case streamFault(StreamID, reason: String)
        /// The sound server paused a stream to set it up again (a forced quantum, a format change) and
        /// it played again after `paused`: a gap of about that long in its audio, not a fault.
        case streamRenegotiated(StreamID, paused: Duration)
        /// The connection to the sound server broke; leases and streams are kept.
        case connectionLost(reason: String)
        /// The connection came back and every stream was reopened.
        case reconnected(attempts: Int, downtime: Duration)
        /// The engine's render quantum changed.
        case quantumChanged(frames: Int)
        /// A stream's output latency changed (``StreamHandle/outputLatency``): a route change, a quantum
        /// change, a filter inserted. A player following a ``SharedSessionMedia`` clock at the ear
        /// needs nothing more; one that schedules its own pictures re-syncs to the new figure. `from`
        /// is nil for the stream's first figure.
        case outputLatencyChanged(StreamID, from: Duration?, to: Duration)
        /// The sound server reported a latency for a stream that cannot be right; the stream kept its
        /// last figure, and clocks at the ear keep running from it.
        case outputLatencyRejected(StreamID, reason: String)
        /// The loudness duck on a stream was set or removed, or its depth moved by a dB or more:
        /// what its render side measured (the depth, the two loudnesses), `nil` once none is set.
        /// The snapshot's ``SessionSnapshot/loudnessDuck`` is the main stream's last one.
        case loudnessDuckChanged(StreamID, LoudnessDuckReading?)
        /// A request was refused; nothing held was changed.
        case requestRejected(SessionError)
        /// A unit's request was granted within one of its limits (a shallower duck, a duck instead of
        /// a pause, generic instead of voice, a deadline), or left an exempt stream alone.
        case limitApplied(owner: String, limit: UnitLimit)
        /// A duck or pause request reached its deadline and was released as if its holder had; the
        /// holder's later release does nothing.
        case duckExpired(DuckInfo)
        /// A unit's bridge gave back everything the unit held: the host tore it down, or its SDK
        /// object went away.
        case unitReleased(owner: String, reason: String)
        /// The session was closed; nothing more reaches the engine.
        case closed
    }

    public var description: String { "\(kind) (cause: \(cause))" }
}
