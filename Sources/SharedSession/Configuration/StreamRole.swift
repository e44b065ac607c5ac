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
