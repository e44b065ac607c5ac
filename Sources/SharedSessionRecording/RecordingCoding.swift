import Foundation
public import SharedSession

// The JSON forms of the session's values, as a recording (``SessionRecorder``) writes them: enums as
// `{"kind": "<case>", <its values by name>}`, names as strings, ids as numbers, durations and instants
// as seconds (durations to the nanosecond; instants from the recording's start).

/// A key of any name, for the hand-written encodings of the session's values.
struct JSONKey: CodingKey, ExpressibleByStringLiteral {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(stringLiteral value: String) { stringValue = value }
}

extension CodingUserInfoKey {
    /// The instant a recording's times count from (a ``RecordingTimeOrigin``): instants in the
    /// session's values are written and read as seconds from it.
    public static let sessionRecordingOrigin = CodingUserInfoKey(rawValue: "SharedSession.recordingOrigin")!
    /// With `true`, instants are left out of the session's values when encoding: the normalized form
    /// a replay compares events in.
    static let sessionRecordingOmitsInstants = CodingUserInfoKey(rawValue: "SharedSession.omitsInstants")!
}

/// The instant a recording's times count from, given to a `JSONEncoder` or `JSONDecoder` under
/// `CodingUserInfoKey.sessionRecordingOrigin` so that instants (a lease's `acquiredAt`, a
/// duck's deadline) are written as seconds from the recording's start. Without one, they count from
/// an instant fixed when the process first encoded or decoded one.
public struct RecordingTimeOrigin: Sendable {
    /// The instant that is 0 seconds.
    public let instant: ContinuousClock.Instant

    /// Counts from `instant`.
    public init(_ instant: ContinuousClock.Instant) { self.instant = instant }

    static let process = RecordingTimeOrigin(.now)
}

extension Duration {
    /// The duration in seconds, as recordings write it.
    var recordedSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// A duration read from a recording, rounded to the nanosecond.
    init?(recordedSeconds seconds: Double) {
        let nanoseconds = (seconds * 1e9).rounded()
        guard nanoseconds.isFinite, abs(nanoseconds) < 9e18 else { return nil }
        self = .nanoseconds(Int64(nanoseconds))
    }
}

extension KeyedEncodingContainer where K == JSONKey {
    mutating func encodeSeconds(_ duration: Duration, forKey key: JSONKey) throws {
        try encode(duration.recordedSeconds, forKey: key)
    }

    mutating func encodeSecondsIfPresent(_ duration: Duration?, forKey key: JSONKey) throws {
        if let duration { try encodeSeconds(duration, forKey: key) }
    }

    mutating func encodeInstant(_ instant: ContinuousClock.Instant?, forKey key: JSONKey, _ encoder: any Encoder)
        throws
    {
        guard let instant, encoder.userInfo[.sessionRecordingOmitsInstants] as? Bool != true else { return }
        let origin = encoder.userInfo[.sessionRecordingOrigin] as? RecordingTimeOrigin ?? .process
        try encode((instant - origin.instant).recordedSeconds, forKey: key)
    }
}

extension KeyedDecodingContainer where K == JSONKey {
    func decodeSeconds(forKey key: JSONKey) throws -> Duration {
        let seconds = try decode(Double.self, forKey: key)
        guard let duration = Duration(recordedSeconds: seconds) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "\(seconds) is not a duration in seconds")
        }
        return duration
    }

    func decodeSecondsIfPresent(forKey key: JSONKey) throws -> Duration? {
        try contains(key) && !decodeNil(forKey: key) ? decodeSeconds(forKey: key) : nil
    }

    func decodeInstantIfPresent(forKey key: JSONKey, _ decoder: any Decoder) throws -> ContinuousClock.Instant? {
        guard let offset = try decodeSecondsIfPresent(forKey: key) else { return nil }
        let origin = decoder.userInfo[.sessionRecordingOrigin] as? RecordingTimeOrigin ?? .process
        return origin.instant + offset
    }

    func decodeKind() throws -> String { try decode(String.self, forKey: "kind") }

    func unknownKind(_ kind: String, of type: String) -> DecodingError {
        DecodingError.dataCorruptedError(
            forKey: "kind", in: self, debugDescription: "unknown \(type) kind \"\(kind)\"")
    }
}

extension Encoder {
    func kindContainer(_ kind: String) throws -> KeyedEncodingContainer<JSONKey> {
        var container = container(keyedBy: JSONKey.self)
        try container.encode(kind, forKey: "kind")
        return container
    }
}

/// A value written as one string (a name) or one number (an id).
private func decodeName(_ decoder: any Decoder) throws -> String {
    try decoder.singleValueContainer().decode(String.self)
}

private func encodeName(_ name: String, _ encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(name)
}

private func lookUp<T>(_ name: String, in all: [T], by key: (T) -> String, _ decoder: any Decoder, type: String)
    throws -> T
{
    guard let found = all.first(where: { key($0) == name }) else {
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: decoder.codingPath,
                debugDescription:
                    "unknown \(type) \"\(name)\": use one of \(all.map(key).joined(separator: ", "))"))
    }
    return found
}

// MARK: Ids and names

extension LeaseID: Codable {
    /// Reads the number.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(UInt64.self))
    }

    /// Writes the number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension StreamID: Codable {
    /// Reads the number.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(UInt64.self))
    }

    /// Writes the number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension AudioSessionType: Codable {
    /// Reads `"generic"` or `"voice"`.
    public init(from decoder: any Decoder) throws {
        self = try lookUp(decodeName(decoder), in: Self.allCases, by: \.description, decoder, type: "session type")
    }

    /// Writes `"generic"` or `"voice"`.
    public func encode(to encoder: any Encoder) throws { try encodeName(description, encoder) }
}

extension StreamRole: Codable {
    /// Reads the role's name.
    public init(from decoder: any Decoder) throws { self.init(try decodeName(decoder)) }

    /// Writes the role's name.
    public func encode(to encoder: any Encoder) throws { try encodeName(name, encoder) }
}

extension RouteChangeReason: Codable {
    /// Reads the reason's name.
    public init(from decoder: any Decoder) throws { self.init(try decodeName(decoder)) }

    /// Writes the reason's name.
    public func encode(to encoder: any Encoder) throws { try encodeName(name, encoder) }
}

extension AudioSessionCategory: Codable {
    static let all: [AudioSessionCategory] = [.ambient, .soloAmbient, .playback, .record, .playAndRecord]

    /// Reads the category's name, one of the five categories.
    public init(from decoder: any Decoder) throws {
        self = try lookUp(decodeName(decoder), in: Self.all, by: \.name, decoder, type: "category")
    }

    /// Writes the category's name.
    public func encode(to encoder: any Encoder) throws { try encodeName(name, encoder) }
}

extension AudioSessionMode: Codable {
    static let all: [AudioSessionMode] = [
        .default, .moviePlayback, .spokenAudio, .voiceChat, .videoChat, .measurement,
    ]

    /// Reads the mode's name, one of the six modes.
    public init(from decoder: any Decoder) throws {
        self = try lookUp(decodeName(decoder), in: Self.all, by: \.name, decoder, type: "mode")
    }

    /// Writes the mode's name.
    public func encode(to encoder: any Encoder) throws { try encodeName(name, encoder) }
}

extension AudioSessionCategoryOptions: Codable {
    /// Reads the options' names, such as `["mixWithOthers"]`.
    public init(from decoder: any Decoder) throws {
        var options: AudioSessionCategoryOptions = []
        for name in try decoder.singleValueContainer().decode([String].self) {
            options.insert(try lookUp(name, in: Self.named, by: { $0.1 }, decoder, type: "category option").0)
        }
        self = options
    }

    /// Writes the options' names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Self.named.filter { contains($0.0) }.map(\.1))
    }
}

// MARK: Configuration

extension SessionConfiguration: Codable {
    /// Reads `{"category": ..., "options": [...], "mode": ...}`, validated as
    /// ``init(category:options:mode:)`` validates.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        do {
            try self.init(
                category: container.decode(AudioSessionCategory.self, forKey: "category"),
                options: container.decodeIfPresent(AudioSessionCategoryOptions.self, forKey: "options") ?? [],
                mode: container.decodeIfPresent(AudioSessionMode.self, forKey: "mode") ?? .default)
        } catch let error as SessionError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    /// Writes `{"category": ..., "options": [...], "mode": ...}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(category, forKey: "category")
        try container.encode(options, forKey: "options")
        try container.encode(mode, forKey: "mode")
    }
}

/// Turns a ``SessionError`` thrown by a validating initializer into the decoding error of the value.
private func validated<T>(_ decoder: any Decoder, _ make: () throws -> T) throws -> T {
    do {
        return try make()
    } catch let error as SessionError {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
    }
}

extension UnitLimits.Excess: Codable {
    /// Reads `"grantWithinLimit"` or `"refuse"`.
    public init(from decoder: any Decoder) throws {
        self = try lookUp(
            decodeName(decoder), in: [.grantWithinLimit, .refuse], by: \.name, decoder, type: "limit excess")
    }

    /// Writes `"grantWithinLimit"` or `"refuse"`.
    public func encode(to encoder: any Encoder) throws { try encodeName(name, encoder) }

    private var name: String {
        switch self {
        case .grantWithinLimit: "grantWithinLimit"
        case .refuse: "refuse"
        }
    }
}

extension UnitLimits: Codable {
    /// Reads the limits; a limit left out is the unlimited default. Validated as ``init(deepestDuckLevel:mayPauseMain:mayTakeVoice:maximumHold:excess:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        let level = try container.decodeIfPresent(Float.self, forKey: "deepestDuckLevel") ?? 0
        let pause = try container.decodeIfPresent(Bool.self, forKey: "mayPauseMain") ?? true
        let voice = try container.decodeIfPresent(Bool.self, forKey: "mayTakeVoice") ?? true
        let hold = try container.decodeSecondsIfPresent(forKey: "maximumHold")
        let excess = try container.decodeIfPresent(Excess.self, forKey: "excess") ?? .grantWithinLimit
        self = try validated(decoder) {
            try UnitLimits(
                deepestDuckLevel: level, mayPauseMain: pause, mayTakeVoice: voice, maximumHold: hold, excess: excess)
        }
    }

    /// Writes every limit; `maximumHold` in seconds, left out when there is none.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(deepestDuckLevel, forKey: "deepestDuckLevel")
        try container.encode(mayPauseMain, forKey: "mayPauseMain")
        try container.encode(mayTakeVoice, forKey: "mayTakeVoice")
        try container.encodeSecondsIfPresent(maximumHold, forKey: "maximumHold")
        try container.encode(excess, forKey: "excess")
    }
}

extension UnitLimit: Codable {
    /// Reads `{"kind": "deepestDuckLevel", "level": ...}`, `{"kind": "mayNotPauseMain"}`,
    /// `{"kind": "mayNotTakeVoice"}`, `{"kind": "maximumHold", "seconds": ...}` or
    /// `{"kind": "exemptStream", "stream": ...}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        switch try container.decodeKind() {
        case "deepestDuckLevel": self = .deepestDuckLevel(try container.decode(Float.self, forKey: "level"))
        case "mayNotPauseMain": self = .mayNotPauseMain
        case "mayNotTakeVoice": self = .mayNotTakeVoice
        case "maximumHold": self = .maximumHold(try container.decodeSeconds(forKey: "seconds"))
        case "exemptStream": self = .exemptStream(try container.decode(StreamID.self, forKey: "stream"))
        case let kind: throw container.unknownKind(kind, of: "limit")
        }
    }

    /// Writes the limit as `{"kind": ..., ...}`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .deepestDuckLevel(let level):
            var container = try encoder.kindContainer("deepestDuckLevel")
            try container.encode(level, forKey: "level")
        case .mayNotPauseMain: _ = try encoder.kindContainer("mayNotPauseMain")
        case .mayNotTakeVoice: _ = try encoder.kindContainer("mayNotTakeVoice")
        case .maximumHold(let hold):
            var container = try encoder.kindContainer("maximumHold")
            try container.encodeSeconds(hold, forKey: "seconds")
        case .exemptStream(let id):
            var container = try encoder.kindContainer("exemptStream")
            try container.encode(id, forKey: "stream")
        }
    }
}

extension VoiceActivityPolicy: Codable {
    /// Reads `{"threshold": dBFS, "attack": s, "hold": s, "release": s}`, validated as
    /// ``init(threshold:attack:hold:release:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        let threshold = try container.decode(Float.self, forKey: "threshold")
        let attack = try container.decodeSeconds(forKey: "attack")
        let hold = try container.decodeSeconds(forKey: "hold")
        let release = try container.decodeSeconds(forKey: "release")
        self = try validated(decoder) {
            try VoiceActivityPolicy(threshold: threshold, attack: attack, hold: hold, release: release)
        }
    }

    /// Writes the threshold in dBFS and the durations in seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(threshold, forKey: "threshold")
        try container.encodeSeconds(attack, forKey: "attack")
        try container.encodeSeconds(hold, forKey: "hold")
        try container.encodeSeconds(release, forKey: "release")
    }
}

extension SessionPolicy: Codable {
    /// Reads every value of the policy (durations in seconds), validated as
    /// ``init(genericConfiguration:voiceConfiguration:duckLevel:fadeDown:fadeUp:suspendInBackground:duckWhenOtherAudioPlays:notifyOthersOnDeactivation:unitLimits:defaultUnitLimits:voiceActivity:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        let generic = try container.decode(SessionConfiguration.self, forKey: "genericConfiguration")
        let voice = try container.decode(SessionConfiguration.self, forKey: "voiceConfiguration")
        let duckLevel = try container.decode(Float.self, forKey: "duckLevel")
        let fadeDown = try container.decodeSeconds(forKey: "fadeDown")
        let fadeUp = try container.decodeSeconds(forKey: "fadeUp")
        let suspend = try container.decode(Bool.self, forKey: "suspendInBackground")
        let duckOthers = try container.decode(Bool.self, forKey: "duckWhenOtherAudioPlays")
        let notify = try container.decode(Bool.self, forKey: "notifyOthersOnDeactivation")
        let unitLimits = try container.decode([String: UnitLimits].self, forKey: "unitLimits")
        let defaultLimits = try container.decode(UnitLimits.self, forKey: "defaultUnitLimits")
        let voiceActivity = try container.decode(VoiceActivityPolicy.self, forKey: "voiceActivity")
        self = try validated(decoder) {
            try SessionPolicy(
                genericConfiguration: generic, voiceConfiguration: voice, duckLevel: duckLevel, fadeDown: fadeDown,
                fadeUp: fadeUp, suspendInBackground: suspend, duckWhenOtherAudioPlays: duckOthers,
                notifyOthersOnDeactivation: notify, unitLimits: unitLimits, defaultUnitLimits: defaultLimits,
                voiceActivity: voiceActivity)
        }
    }

    /// Writes every value of the policy, durations in seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(genericConfiguration, forKey: "genericConfiguration")
        try container.encode(voiceConfiguration, forKey: "voiceConfiguration")
        try container.encode(duckLevel, forKey: "duckLevel")
        try container.encodeSeconds(fadeDown, forKey: "fadeDown")
        try container.encodeSeconds(fadeUp, forKey: "fadeUp")
        try container.encode(suspendInBackground, forKey: "suspendInBackground")
        try container.encode(duckWhenOtherAudioPlays, forKey: "duckWhenOtherAudioPlays")
        try container.encode(notifyOthersOnDeactivation, forKey: "notifyOthersOnDeactivation")
        try container.encode(unitLimits, forKey: "unitLimits")
        try container.encode(defaultUnitLimits, forKey: "defaultUnitLimits")
        try container.encode(voiceActivity, forKey: "voiceActivity")
    }
}

extension StreamDescriptor: Codable {
    /// Reads `{"name", "role", "isBackgroundMusic", "target", "isExempt"}`; only `name` and `role` are
    /// required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        self.init(
            name: try container.decode(String.self, forKey: "name"),
            role: try container.decode(StreamRole.self, forKey: "role"),
            isBackgroundMusic: try container.decodeIfPresent(Bool.self, forKey: "isBackgroundMusic") ?? false,
            target: try container.decodeIfPresent(String.self, forKey: "target"),
            isExempt: try container.decodeIfPresent(Bool.self, forKey: "isExempt") ?? false)
    }

    /// Writes the descriptor's values; `target` is left out when it is `nil`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(name, forKey: "name")
        try container.encode(role, forKey: "role")
        try container.encode(isBackgroundMusic, forKey: "isBackgroundMusic")
        try container.encodeIfPresent(target, forKey: "target")
        try container.encode(isExempt, forKey: "isExempt")
    }
}

extension RouteChange: Codable {
    /// Reads `{"reason", "previousOutput", "currentOutput"}`; the outputs may be left out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        self.init(
            reason: try container.decode(RouteChangeReason.self, forKey: "reason"),
            previousOutput: try container.decodeIfPresent(String.self, forKey: "previousOutput"),
            currentOutput: try container.decodeIfPresent(String.self, forKey: "currentOutput"))
    }

    /// Writes the reason and the outputs that are known.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(reason, forKey: "reason")
        try container.encodeIfPresent(previousOutput, forKey: "previousOutput")
        try container.encodeIfPresent(currentOutput, forKey: "currentOutput")
    }
}

extension SessionError.Code: Codable {
    /// Reads the code's name, such as `"invalidValue"`.
    public init(from decoder: any Decoder) throws {
        let name = try decodeName(decoder)
        guard let code = Self(named: name) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "unknown error code \"\(name)\""))
        }
        self = code
    }

    /// Writes the code's name.
    public func encode(to encoder: any Encoder) throws { try encodeName(description, encoder) }
}

extension SessionError: Codable {
    /// Reads `{"code", "message"}`; where the error was raised is not recorded.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        self.init(
            code: try container.decode(Code.self, forKey: "code"),
            message: try container.decode(String.self, forKey: "message"))
    }

    /// Writes `{"code", "message"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(code, forKey: "code")
        try container.encode(message, forKey: "message")
    }
}
