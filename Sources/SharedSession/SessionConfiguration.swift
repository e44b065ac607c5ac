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

/// Options that adjust a category. Each is valid only with some categories; see
/// ``SessionConfiguration/init(category:options:mode:)``.
public struct AudioSessionCategoryOptions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Mix with other apps' mixable audio. With `playback` or `playAndRecord`.
    public static let mixWithOthers = AudioSessionCategoryOptions(rawValue: 1 << 0)
    /// Lower other apps' audio while active. With `playback` or `playAndRecord`.
    public static let duckOthers = AudioSessionCategoryOptions(rawValue: 1 << 1)
    /// Bluetooth hands-free devices as input. With `playAndRecord`.
    public static let allowBluetooth = AudioSessionCategoryOptions(rawValue: 1 << 2)
    /// Bluetooth A2DP devices as output while recording. With `playAndRecord`.
    public static let allowBluetoothA2DP = AudioSessionCategoryOptions(rawValue: 1 << 3)
    /// The speaker rather than the receiver when nothing else is connected. With `playAndRecord`.
    public static let defaultToSpeaker = AudioSessionCategoryOptions(rawValue: 1 << 4)

    static let named: [(AudioSessionCategoryOptions, String, Set<AudioSessionCategory>)] = [
        (.mixWithOthers, "mixWithOthers", [.playback, .playAndRecord]),
        (.duckOthers, "duckOthers", [.playback, .playAndRecord]),
        (.allowBluetooth, "allowBluetooth", [.playAndRecord]),
        (.allowBluetoothA2DP, "allowBluetoothA2DP", [.playAndRecord]),
        (.defaultToSpeaker, "defaultToSpeaker", [.playAndRecord]),
    ]

    public var description: String {
        "[" + Self.named.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}

/// A mode: a specialisation of a category for one use, like AVAudioSession's modes.
public struct AudioSessionMode: Hashable, Sendable, CustomStringConvertible {
    /// The mode's name.
    public let name: String
    /// The categories the mode can be used with; empty means any.
    let categories: Set<AudioSessionCategory>

    private init(_ name: String, categories: Set<AudioSessionCategory>) {
        self.name = name
        self.categories = categories
    }

    /// No specialisation.
    public static let `default` = AudioSessionMode("default", categories: [])
    /// Film and video playback.
    public static let moviePlayback = AudioSessionMode("moviePlayback", categories: [.playback])
    /// Spoken audio such as podcasts.
    public static let spokenAudio = AudioSessionMode("spokenAudio", categories: [.playback])
    /// Two-way voice: echo cancellation and voice processing.
    public static let voiceChat = AudioSessionMode("voiceChat", categories: [.playAndRecord])
    /// Two-way video calls.
    public static let videoChat = AudioSessionMode("videoChat", categories: [.playAndRecord])
    /// Unprocessed input and output for measuring.
    public static let measurement = AudioSessionMode(
        "measurement", categories: [.playback, .record, .playAndRecord])

    public var description: String { name }
}

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
                    + "use it with \(mode.categories.map(\.name).sorted().joined(separator: " or ")), or use mode default"
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
