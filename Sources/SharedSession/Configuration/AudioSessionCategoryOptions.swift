/// Options that adjust a category. Each is valid only with some categories; see
/// ``SessionConfiguration/init(category:options:mode:)``.
public struct AudioSessionCategoryOptions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The option bits.
    public let rawValue: UInt32
    /// Creates options from their bits.
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

    /// Each option with its name and the categories it goes with. `package`: SharedSessionRecording
    /// writes and reads options by these names.
    package static let named: [(AudioSessionCategoryOptions, String, Set<AudioSessionCategory>)] = [
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
