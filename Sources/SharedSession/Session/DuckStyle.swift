/// What a duck lease asks of the main stream.
public enum DuckStyle: Sendable, Hashable, CustomStringConvertible {
    /// Lower the main stream to the host's volume times `level` (or the policy's level if `nil`).
    case duck(level: Float?)
    /// Pause the main stream instead of lowering it (Android's pause-when-ducked, the W3C
    /// Audio Session API's transient-solo).
    case pause

    public var description: String {
        switch self {
        case .duck(let level?): "duck to \(level)"
        case .duck(nil): "duck"
        case .pause: "pause"
        }
    }
}
