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

    /// The level the style asks for, if it lowers the main stream.
    var requestedLevel: Float?? {
        switch self {
        case .duck(let level), .followActivity(_, let level): .some(level)
        case .pause: .none
        }
    }

    public var description: String {
        switch self {
        case .duck(let level?): "duck to \(level)"
        case .duck(nil): "duck"
        case .pause: "pause"
        case .followActivity(let source, let level?): "duck to \(level) while \(source) is active"
        case .followActivity(let source, nil): "duck while \(source) is active"
        }
    }
}
