/// What a duck lease asks of the main stream.
public enum DuckStyle: Sendable, Hashable, CustomStringConvertible {
    /// Lower the main stream to the host's volume times `level` (or the policy's level if `nil`).
    case duck(level: Float?)
    /// Pause the main stream instead of lowering it (Android's pause-when-ducked, the W3C
    /// Audio Session API's transient-solo).
    case pause
    /// Lower the main stream to the host's volume times `level` (or the policy's level) only while
    /// `source` is active (someone speaks), decided per sample on the render side; in the pauses
    /// between sentences the main stream comes back. See ``VoiceActivityPolicy``.
    case followActivity(ActivitySource, level: Float?)
    /// Keep `stream` `margin` LU (or the policy's margin) above the main stream while it is active,
    /// both measured as BS.1770 loudness on the render side: the depth follows the loudness of the
    /// two within the policy's bounds, and in the pauses between sentences the main stream comes back
    /// as with ``followActivity(_:level:)``. See ``LoudnessDuckPolicy``.
    case followLoudness(StreamID, margin: Float?)

    /// The level the style asks for, if it lowers the main stream.
    var requestedLevel: Float?? {
        switch self {
        case .duck(let level), .followActivity(_, let level): .some(level)
        case .pause, .followLoudness: .none
        }
    }

    /// The stream whose activity the duck follows, if it follows one.
    var followedSource: ActivitySource? {
        switch self {
        case .followActivity(let source, _): source
        case .followLoudness(let stream, _): .stream(stream)
        case .duck, .pause: nil
        }
    }

    public var description: String {
        switch self {
        case .duck(let level?): "duck to \(level)"
        case .duck(nil): "duck"
        case .pause: "pause"
        case .followActivity(let source, let level?): "duck to \(level) while \(source) is active"
        case .followActivity(let source, nil): "duck while \(source) is active"
        case .followLoudness(let stream, let margin?): "keep \(stream) \(margin) LU above the main stream"
        case .followLoudness(let stream, nil): "keep \(stream) above the main stream by the policy's margin"
        }
    }
}
