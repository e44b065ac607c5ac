/// Something an engine observed and reports to the session.
public enum EngineEvent: Sendable, Hashable {
    /// A platform event: a route change, another application's audio starting or stopping.
    case system(SystemEvent)
    /// A stream's volume was changed from outside the process (a desktop mixer, `wpctl set-volume`).
    /// On the main stream the session takes it as the host's volume; the duck stays on top.
    case externalVolumeChange(stream: StreamID, volume: Float)
    /// A stream stopped playing without being asked to, or never started.
    case streamFault(stream: StreamID, reason: String)
    /// The sound server paused a stream to set it up again (a forced quantum or a format change: its
    /// buffers are made again) and it played again after `paused`, within a few milliseconds. Not a
    /// fault: the stream is whole, its audio has a gap of about `paused`.
    case streamRenegotiated(stream: StreamID, paused: Duration)
    /// The connection to the sound server broke; the engine is reconnecting.
    case connectionLost(reason: String)
    /// The connection came back and every stream was reopened with its last gain and play state.
    case reconnected(attempts: Int, downtime: Duration)
    /// The engine's render quantum changed.
    case quantumChanged(frames: Int)
    /// A stream's output latency (``StreamControl/outputLatency``) changed: the route changed (to
    /// Bluetooth headphones, through a filter), or the quantum did. `from` is nil for the first figure.
    case outputLatencyChanged(stream: StreamID, from: Duration?, to: Duration)
    /// The sound server reported a latency for a stream that cannot be right (not finite, negative, or
    /// longer than any route has); the engine kept the stream's last figure and clock. `reason` names
    /// the figure and why it was refused.
    case outputLatencyRejected(stream: StreamID, reason: String)
    /// The loudness duck on a stream (the main stream) was set or removed, or its depth moved by
    /// ``LoudnessDuckReading/reportStep`` dB or more since the last report: `reading` is what its
    /// render side measured (``StreamControl/loudnessDuck``), `nil` once no loudness duck is set.
    case loudnessDuckChanged(stream: StreamID, reading: LoudnessDuckReading?)
    /// A stream that other processes play and that ducks the main stream while it plays (an overlay
    /// adopted from a web view's node) started or stopped playing. The session holds a duck for the
    /// stream's owner while it plays, under the owner's limits, as if the owner had called
    /// ``SharedSession/duck(_:)`` with `DuckRequest(owner:)`, and releases it when the stream stops or
    /// closes. Ignored for the main stream and for a stream no unit owns.
    case streamPlaying(stream: StreamID, playing: Bool)
}
