/// The kind of session an SDK unit asks the host for (StreamLayer's `SLRAudioSessionType`).
public enum AudioSessionType: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Playback of the unit's own media alongside the main video: the policy's generic configuration.
    case generic
    /// A voice chat with the microphone: the policy's voice configuration. Takes precedence over generic.
    case voice

    public var description: String {
        switch self {
        case .generic: "generic"
        case .voice: "voice"
        }
    }
}

/// Names one lease of a session: a session lease or a duck lease. Unique within a session.
public struct LeaseID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number; leases are numbered in the order they were made.
    public let rawValue: UInt64

    /// Wraps a raw number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: LeaseID, rhs: LeaseID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "lease#\(rawValue)" }
}
