/// A category with its options and mode, validated as the reference documents require.
public struct SessionConfiguration: Hashable, Sendable, CustomStringConvertible {
    /// The category.
    public let category: AudioSessionCategory
    /// The category options.
    public let options: AudioSessionCategoryOptions
    /// The mode.
    public let mode: AudioSessionMode

    /// Creates a configuration.
    ///
    /// - Throws: ``SessionError`` with code `invalidConfiguration` naming the offending option or mode
    ///   and the category, if an option or mode is not valid with the category: `defaultToSpeaker`,
    ///   `allowBluetooth` and `allowBluetoothA2DP` need `playAndRecord`; `mixWithOthers` and `duckOthers`
    ///   need `playback` or `playAndRecord`; `voiceChat` and `videoChat` need `playAndRecord`;
    ///   `moviePlayback` and `spokenAudio` need `playback`.
    public init(
        category: AudioSessionCategory, options: AudioSessionCategoryOptions = [], mode: AudioSessionMode = .default
    ) throws(SessionError) {
        for (option, name, allowed) in AudioSessionCategoryOptions.named
        where options.contains(option) && !allowed.contains(category) {
            throw SessionError(
                code: .invalidConfiguration,
                message: "option \(name) is not allowed with category \(category): "
                    + "use it with \(allowed.map(\.name).sorted().joined(separator: " or ")), or drop the option")
        }
        if !mode.categories.isEmpty, !mode.categories.contains(category) {
            throw SessionError(
                code: .invalidConfiguration,
                message: "mode \(mode) is not allowed with category \(category): "
                    + "use it with \(mode.categories.map(\.name).sorted().joined(separator: " or ")), "
                    + "or use mode default"
            )
        }
        self.category = category
        self.options = options
        self.mode = mode
    }

    /// Playback that mixes with other audio, for films: the generic session of the StreamLayer sample.
    public static let generic = try! SessionConfiguration(
        category: .playback, options: .mixWithOthers, mode: .moviePlayback)

    /// Voice chat with the microphone, Bluetooth headsets and the speaker by default.
    public static let voice = try! SessionConfiguration(
        category: .playAndRecord, options: [.allowBluetooth, .defaultToSpeaker], mode: .voiceChat)

    /// Whether the session mixes with other apps' audio: `ambient`, or any category with `mixWithOthers`.
    public var mixesWithOthers: Bool { category.mixesByDefault || options.contains(.mixWithOthers) }

    public var description: String { "\(category) \(options) mode \(mode)" }
}
