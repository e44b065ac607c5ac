public import SharedSession

// The JSON forms of the session's values, as a recording (SharedSessionRecording's `SessionRecorder`)
// writes them and the remote protocol (SharedSessionRemote) sends them: names as strings, ids as
// numbers, durations as seconds (to the nanosecond), structs as objects of their fields (see
// ``JSONForm``).

// MARK: Ids and names

extension LeaseID: Codable, RecordedField {
    /// Reads the number.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(UInt64.self))
    }

    /// Writes the number.
    public func encode(to encoder: any Encoder) throws { try encodeValue(rawValue, encoder) }
}

extension StreamID: Codable, RecordedField {
    /// Reads the number.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(UInt64.self))
    }

    /// Writes the number.
    public func encode(to encoder: any Encoder) throws { try encodeValue(rawValue, encoder) }
}

extension AudioSessionType: Codable, RecordedField {
    /// Reads `"generic"` or `"voice"`.
    public init(from decoder: any Decoder) throws {
        self = try lookUp(decoder, in: Self.allCases, by: \.description, type: "session type")
    }

    /// Writes `"generic"` or `"voice"`.
    public func encode(to encoder: any Encoder) throws { try encodeValue(description, encoder) }
}

extension StreamRole: Codable, RecordedField {
    /// Reads the role's name.
    public init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }

    /// Writes the role's name.
    public func encode(to encoder: any Encoder) throws { try encodeValue(name, encoder) }
}

extension RouteChangeReason: Codable, RecordedField {
    /// Reads the reason's name.
    public init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }

    /// Writes the reason's name.
    public func encode(to encoder: any Encoder) throws { try encodeValue(name, encoder) }
}

extension AudioSessionCategory: Codable, RecordedField {
    static let all: [AudioSessionCategory] = [.ambient, .soloAmbient, .playback, .record, .playAndRecord]

    /// Reads the category's name, one of the five categories.
    public init(from decoder: any Decoder) throws {
        self = try lookUp(decoder, in: Self.all, by: \.name, type: "category")
    }

    /// Writes the category's name.
    public func encode(to encoder: any Encoder) throws { try encodeValue(name, encoder) }
}

extension AudioSessionMode: Codable, RecordedField {
    static let all: [AudioSessionMode] = [.default, .moviePlayback, .spokenAudio, .voiceChat, .videoChat, .measurement]

    /// Reads the mode's name, one of the six modes.
    public init(from decoder: any Decoder) throws { self = try lookUp(decoder, in: Self.all, by: \.name, type: "mode") }

    /// Writes the mode's name.
    public func encode(to encoder: any Encoder) throws { try encodeValue(name, encoder) }
}

extension AudioSessionCategoryOptions: Codable, RecordedField {
    /// Reads the options' names, such as `["mixWithOthers"]`.
    public init(from decoder: any Decoder) throws {
        var options: AudioSessionCategoryOptions = []
        for name in try decoder.singleValueContainer().decode([String].self) {
            options.insert(try lookUp(name, decoder, in: Self.named, by: { $0.1 }, type: "category option").0)
        }
        self = options
    }

    /// Writes the options' names.
    public func encode(to encoder: any Encoder) throws {
        try encodeValue(Self.named.filter { contains($0.0) }.map(\.1), encoder)
    }
}

extension UnitLimits.Excess: Codable, RecordedField {
    /// Reads `"grantWithinLimit"` or `"refuse"`.
    public init(from decoder: any Decoder) throws {
        self = try lookUp(decoder, in: [.grantWithinLimit, .refuse], by: \.name, type: "limit excess")
    }

    /// Writes `"grantWithinLimit"` or `"refuse"`.
    public func encode(to encoder: any Encoder) throws { try encodeValue(name, encoder) }

    private var name: String {
        switch self {
        case .grantWithinLimit: "grantWithinLimit"
        case .refuse: "refuse"
        }
    }
}

extension SessionError.Code: Codable, RecordedField {
    /// Reads the code's name, such as `"invalidValue"`.
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let code = Self(named: name) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "unknown error code \"\(name)\""))
        }
        self = code
    }

    /// Writes the code's name.
    public func encode(to encoder: any Encoder) throws { try encodeValue(description, encoder) }
}

/// Writes a value that is one string or one number.
func encodeValue(_ value: some Encodable, _ encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(value)
}

/// The one of `all` that the decoder's string names.
func lookUp<T>(_ decoder: any Decoder, in all: [T], by key: (T) -> String, type: String) throws -> T {
    try lookUp(try decoder.singleValueContainer().decode(String.self), decoder, in: all, by: key, type: type)
}

private func lookUp<T>(_ name: String, _ decoder: any Decoder, in all: [T], by key: (T) -> String, type: String)
    throws -> T
{
    guard let found = all.first(where: { key($0) == name }) else {
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: decoder.codingPath,
                debugDescription: "unknown \(type) \"\(name)\": use one of \(all.map(key).joined(separator: ", "))"))
    }
    return found
}

// MARK: Configurations and policies

extension SessionConfiguration: Codable, RecordedField {
    /// Reads `{"category": ..., "options": [...], "mode": ...}`, validated as
    /// `init(category:options:mode:)` validates.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"category": ..., "options": [...], "mode": ...}`.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "configuration", "category", Field("options", default: []), Field("mode", default: .default),
        make: { try Self(category: $0, options: $1, mode: $2) }, parts: { ($0.category, $0.options, $0.mode) })
}

extension UnitLimits: Codable, RecordedField {
    /// Reads the limits; a limit left out is the unlimited default. Validated as
    /// `init(deepestDuckLevel:mayPauseMain:mayTakeVoice:maximumHold:excess:)`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes every limit; `maximumHold` in seconds, left out when there is none.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "unit limits", Field("deepestDuckLevel", default: 0), Field("mayPauseMain", default: true),
        Field("mayTakeVoice", default: true), "maximumHold", Field("excess", default: .grantWithinLimit),
        make: { try Self(deepestDuckLevel: $0, mayPauseMain: $1, mayTakeVoice: $2, maximumHold: $3, excess: $4) },
        parts: { ($0.deepestDuckLevel, $0.mayPauseMain, $0.mayTakeVoice, $0.maximumHold, $0.excess) })
}

extension UnitLimit: Codable, RecordedField {
    /// Reads `{"kind": "deepestDuckLevel", "level": ...}`, `{"kind": "mayNotPauseMain"}`,
    /// `{"kind": "mayNotTakeVoice"}`, `{"kind": "maximumHold", "seconds": ...}` or
    /// `{"kind": "exemptStream", "stream": ...}`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes the limit as `{"kind": ..., ...}`.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        kinds: "limit",
        [
            .case(
                "deepestDuckLevel", "level", make: Self.deepestDuckLevel,
                match: { if case .deepestDuckLevel(let level) = $0 { level } else { nil } }),
            .case("mayNotPauseMain", .mayNotPauseMain),
            .case("mayNotTakeVoice", .mayNotTakeVoice),
            .case(
                "maximumHold", "seconds", make: Self.maximumHold,
                match: { if case .maximumHold(let hold) = $0 { hold } else { nil } }),
            .case(
                "exemptStream", "stream", make: Self.exemptStream,
                match: { if case .exemptStream(let id) = $0 { id } else { nil } }),
        ])
}

extension VoiceActivityPolicy: Codable, RecordedField {
    /// Reads `{"threshold": dBFS, "attack": s, "hold": s, "release": s}`, validated as
    /// `init(threshold:attack:hold:release:)`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes the threshold in dBFS and the durations in seconds.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "voice-activity policy", "threshold", "attack", "hold", "release",
        make: { try Self(threshold: $0, attack: $1, hold: $2, release: $3) },
        parts: { ($0.threshold, $0.attack, $0.hold, $0.release) })
}

extension LoudnessDuckPolicy.Window: Codable, RecordedField {
    /// Reads `"momentary"` or `"shortTerm"`.
    public init(from decoder: any Decoder) throws {
        self = try lookUp(decoder, in: Self.allCases, by: \.rawValue, type: "loudness window")
    }

    /// Writes the window's name.
    public func encode(to encoder: any Encoder) throws { try encodeValue(rawValue, encoder) }
}

extension LoudnessDuckPolicy: Codable, RecordedField {
    /// Reads `{"margin": LU, "deepest": dB, "shallowest": dB, "window", "deepeningRate": dB/s,
    /// "lighteningRate": dB/s, "tolerance": LU}`, validated as
    /// `init(margin:deepest:shallowest:window:deepeningRate:lighteningRate:tolerance:)`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes every value.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "loudness-duck policy", "margin", "deepest", "shallowest", "window", "deepeningRate",
        "lighteningRate", "tolerance",
        make: {
            try Self(
                margin: $0, deepest: $1, shallowest: $2, window: $3, deepeningRate: $4, lighteningRate: $5,
                tolerance: $6)
        },
        parts: {
            ($0.margin, $0.deepest, $0.shallowest, $0.window, $0.deepeningRate, $0.lighteningRate, $0.tolerance)
        })
}

extension LoudnessDuckReading: Codable, RecordedField {
    /// Reads `{"depth": dB, "mainLoudness": LUFS, "sourceLoudness": LUFS}`; a loudness left out is
    /// unknown.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes the depth and the loudnesses known.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "loudness-duck reading", "depth", "mainLoudness", "sourceLoudness",
        make: Self.init(depth:mainLoudness:sourceLoudness:),
        parts: { ($0.depth, $0.mainLoudness, $0.sourceLoudness) })
}

extension SessionPolicy: Codable, RecordedField {
    /// Reads every value of the policy (durations in seconds), validated as the initializer that takes
    /// them all validates them (`init(genericConfiguration:voiceConfiguration:duckLevel:…)`);
    /// `loudnessDuck` is left out when it is the default, and read as the default when left out (as in
    /// recordings made before it).
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes every value of the policy, durations in seconds.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "policy", "genericConfiguration", "voiceConfiguration", "duckLevel", "fadeDown", "fadeUp",
        "suspendInBackground", "duckWhenOtherAudioPlays", "notifyOthersOnDeactivation", "unitLimits",
        "defaultUnitLimits", "voiceActivity", Field("loudnessDuck", omittedWhen: .default),
        make: {
            try Self(
                genericConfiguration: $0, voiceConfiguration: $1, duckLevel: $2, fadeDown: $3, fadeUp: $4,
                suspendInBackground: $5, duckWhenOtherAudioPlays: $6, notifyOthersOnDeactivation: $7, unitLimits: $8,
                defaultUnitLimits: $9, voiceActivity: $10, loudnessDuck: $11)
        },
        parts: {
            (
                $0.genericConfiguration, $0.voiceConfiguration, $0.duckLevel, $0.fadeDown, $0.fadeUp,
                $0.suspendInBackground, $0.duckWhenOtherAudioPlays, $0.notifyOthersOnDeactivation, $0.unitLimits,
                $0.defaultUnitLimits, $0.voiceActivity, $0.loudnessDuck
            )
        })
}

// MARK: Streams, routes, errors

extension StreamDescriptor: Codable, RecordedField {
    /// Reads `{"name", "role", "isBackgroundMusic", "target", "isExempt"}`; only `name` and `role` are
    /// required.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes the descriptor's values; `target` is left out when it is `nil`.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "stream descriptor", "name", "role", Field("isBackgroundMusic", default: false), "target",
        Field("isExempt", default: false), make: Self.init(name:role:isBackgroundMusic:target:isExempt:),
        parts: { ($0.name, $0.role, $0.isBackgroundMusic, $0.target, $0.isExempt) })
}

extension RouteChange: Codable, RecordedField {
    /// Reads `{"reason", "previousOutput", "currentOutput"}`; the outputs may be left out.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes the reason and the outputs that are known.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "route change", "reason", "previousOutput", "currentOutput",
        make: Self.init(reason:previousOutput:currentOutput:),
        parts: { ($0.reason, $0.previousOutput, $0.currentOutput) })
}

extension SessionError: Codable, RecordedField {
    /// Reads `{"code", "message"}`; where the error was raised is not recorded.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"code", "message"}`.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "error", "code", "message", make: { Self(code: $0, message: $1) }, parts: { ($0.code, $0.message) })
}

extension String: RecordedField {}
extension Bool: RecordedField {}
extension Int: RecordedField {}
extension Float: RecordedField {}
extension Array: RecordedField where Element: RecordedField & Codable {}
extension Dictionary: RecordedField where Key == String, Value: RecordedField & Codable {}
