/// Names one stream of an engine.
public struct StreamID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number the session gave the stream; unique within a session.
    public let rawValue: UInt64

    /// Wraps a raw number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: StreamID, rhs: StreamID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "stream#\(rawValue)" }
}

/// What a stream plays, in the words of PipeWire's `media.role` and Android's usage attributes.
///
/// The set grows, so it is a struct with static members rather than a frozen enum.
public struct StreamRole: Hashable, Sendable, CustomStringConvertible {
    /// The value given to the sound server (PipeWire's `media.role`).
    public let name: String

    /// Creates a role with a server-side name.
    public init(_ name: String) { self.name = name }

    /// The main video's audio.
    public static let movie = StreamRole("Movie")
    /// Music and feed clips.
    public static let music = StreamRole("Music")
    /// Short notification sounds.
    public static let notification = StreamRole("Notification")
    /// Voice chat.
    public static let communication = StreamRole("Communication")
    /// Game and interface sounds.
    public static let game = StreamRole("Game")

    public var description: String { name }
}

/// How a stream presents itself to the engine and to the session.
public struct StreamDescriptor: Hashable, Sendable {
    /// A name for logs, snapshots and the sound server's node description.
    public var name: String
    /// The stream's role.
    public var role: StreamRole
    /// Background music is muted while another app's audio plays under a mixable category (the
    /// Wwise BGM bus behaviour).
    public var isBackgroundMusic: Bool
    /// The output to play to, by the sound server's name for it (PipeWire's `node.name` of a sink);
    /// `nil` follows the default output. An engine with one output (the offline engine) ignores it.
    public var target: String?

    /// Describes a stream.
    public init(name: String, role: StreamRole, isBackgroundMusic: Bool = false, target: String? = nil) {
        self.name = name
        self.role = role
        self.isBackgroundMusic = isBackgroundMusic
        self.target = target
    }
}
