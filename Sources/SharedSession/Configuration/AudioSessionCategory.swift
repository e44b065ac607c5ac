/// An audio session category: what the session does with the silent switch, other apps' audio,
/// recording and the background. The four of the reference documents plus `record`.
public struct AudioSessionCategory: Hashable, Sendable, CustomStringConvertible {
    /// The category's name.
    public let name: String
    /// Whether the category records (opens the voice input).
    public let recordsInput: Bool
    /// Whether the category plays output.
    public let playsOutput: Bool
    /// Whether the category mixes with other apps' audio without any option (only `ambient`).
    public let mixesByDefault: Bool
    /// Whether audio keeps rendering in the background (unless the policy suspends anyway).
    public let rendersInBackground: Bool

    private init(_ name: String, records: Bool, plays: Bool, mixes: Bool, background: Bool) {
        self.name = name
        self.recordsInput = records
        self.playsOutput = plays
        self.mixesByDefault = mixes
        self.rendersInBackground = background
    }

    /// Mixes with other audio, silenced by the silent switch, suspended in the background.
    public static let ambient = AudioSessionCategory(
        "ambient", records: false, plays: true, mixes: true, background: false)
    /// Interrupts other audio, silenced by the silent switch, suspended in the background.
    public static let soloAmbient = AudioSessionCategory(
        "soloAmbient", records: false, plays: true, mixes: false, background: false)
    /// Playback that continues in the background; mixes only with `mixWithOthers`.
    public static let playback = AudioSessionCategory(
        "playback", records: false, plays: true, mixes: false, background: true)
    /// Recording only.
    public static let record = AudioSessionCategory(
        "record", records: true, plays: false, mixes: false, background: true)
    /// Playback and recording at once: voice chat.
    public static let playAndRecord = AudioSessionCategory(
        "playAndRecord", records: true, plays: true, mixes: false, background: true)

    public var description: String { name }
}
