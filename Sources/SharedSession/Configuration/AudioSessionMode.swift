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

    /// Whether the mode asks for voice processing, as iOS's chat modes do: the voice input is
    /// echo-cancelled against what the session plays. ``voiceChat`` and ``videoChat`` do; an engine
    /// that can cancel echo (the PipeWire engine) does it while such a configuration records input,
    /// and ``OfflineEngine`` passes its input through unchanged.
    public var usesVoiceProcessing: Bool { self == .voiceChat || self == .videoChat }

    public var description: String { name }
}
