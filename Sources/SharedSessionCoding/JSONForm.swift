import SharedSession

// The machinery every JSON form of the session's values is written with: each value's form is given
// once, as its keys, how to make the value from its fields and how to take it apart, and both
// directions (Codable's encode and decode) come from that one description.

/// A key of any name.
struct JSONKey: CodingKey, ExpressibleByStringLiteral, Sendable {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(stringLiteral value: String) { stringValue = value }
}

/// One field of a JSON object: its key, and what the value is when the key is missing or null
/// (`nil`: the field is required, unless its type is optional).
struct Field<Value: RecordedField>: ExpressibleByStringLiteral, Sendable {
    let key: JSONKey
    let fallback: Value?
    /// Whether a value is left out when written: the default of a field added to a form after files
    /// were written without it, so those files and new ones with the default read and write alike.
    let omits: (@Sendable (Value) -> Bool)?

    init(_ name: String, default fallback: Value? = nil) {
        key = JSONKey(name)
        self.fallback = fallback
        omits = nil
    }

    /// A field that is left out when it holds `fallback`, and read as `fallback` when left out.
    init(_ name: String, omittedWhen fallback: Value) where Value: Equatable {
        key = JSONKey(name)
        self.fallback = fallback
        omits = { $0 == fallback }
    }

    init(stringLiteral value: String) { self.init(value) }

    func read(_ container: KeyedDecodingContainer<JSONKey>, _ decoder: any Decoder) throws -> Value {
        if let fallback, try !container.contains(key) || container.decodeNil(forKey: key) { return fallback }
        return try Value.read(key, from: container, decoder)
    }

    func write(_ value: Value, _ container: inout KeyedEncodingContainer<JSONKey>, _ encoder: any Encoder) throws {
        if let omits, omits(value) { return }
        try value.write(key, to: &container, encoder)
    }
}

/// A value as a field of a JSON object. A `Codable` value is written as itself; a duration as
/// seconds; an instant as seconds from the recording's start (see ``RecordingTimeOrigin``); an
/// optional that is `nil` is left out.
protocol RecordedField: Sendable {
    static func read(_ key: JSONKey, from container: KeyedDecodingContainer<JSONKey>, _ decoder: any Decoder)
        throws -> Self
    func write(_ key: JSONKey, to container: inout KeyedEncodingContainer<JSONKey>, _ encoder: any Encoder) throws
}

extension RecordedField where Self: Codable {
    static func read(_ key: JSONKey, from container: KeyedDecodingContainer<JSONKey>, _ decoder: any Decoder)
        throws -> Self
    {
        try container.decode(Self.self, forKey: key)
    }

    func write(_ key: JSONKey, to container: inout KeyedEncodingContainer<JSONKey>, _ encoder: any Encoder) throws {
        try container.encode(self, forKey: key)
    }
}

extension Optional: RecordedField where Wrapped: RecordedField {
    static func read(_ key: JSONKey, from container: KeyedDecodingContainer<JSONKey>, _ decoder: any Decoder)
        throws -> Self
    {
        try container.contains(key) && !container.decodeNil(forKey: key)
            ? Wrapped.read(key, from: container, decoder) : nil
    }

    func write(_ key: JSONKey, to container: inout KeyedEncodingContainer<JSONKey>, _ encoder: any Encoder) throws {
        try self?.write(key, to: &container, encoder)
    }
}

extension Duration: RecordedField {
    static func read(_ key: JSONKey, from container: KeyedDecodingContainer<JSONKey>, _ decoder: any Decoder)
        throws -> Self
    {
        let seconds = try container.decode(Double.self, forKey: key)
        guard let duration = Duration(recordedSeconds: seconds) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "\(seconds) is not a duration in seconds")
        }
        return duration
    }

    func write(_ key: JSONKey, to container: inout KeyedEncodingContainer<JSONKey>, _ encoder: any Encoder) throws {
        try container.encode(recordedSeconds, forKey: key)
    }

    /// The duration in seconds, as recordings write it.
    package var recordedSeconds: Double { inSeconds }

    /// A duration read from a recording, rounded to the nanosecond.
    package init?(recordedSeconds seconds: Double) {
        let nanoseconds = (seconds * 1e9).rounded()
        guard nanoseconds.isFinite, abs(nanoseconds) < 9e18 else { return nil }
        self = .nanoseconds(Int64(nanoseconds))
    }
}

extension ContinuousClock.Instant: RecordedField {
    /// Seconds from the origin; a missing instant is the process's origin.
    static func read(_ key: JSONKey, from container: KeyedDecodingContainer<JSONKey>, _ decoder: any Decoder)
        throws -> Self
    {
        guard let offset = try Duration?.read(key, from: container, decoder) else {
            return RecordingTimeOrigin.process.instant
        }
        return RecordingTimeOrigin.of(decoder.userInfo).instant + offset
    }

    /// Seconds from the origin; nothing in the normalized form replays compare.
    func write(_ key: JSONKey, to container: inout KeyedEncodingContainer<JSONKey>, _ encoder: any Encoder) throws {
        guard !encoder.omitsInstants else { return }
        try (self - RecordingTimeOrigin.of(encoder.userInfo).instant).write(key, to: &container, encoder)
    }
}

extension CodingUserInfoKey {
    /// The instant a recording's times count from (a ``RecordingTimeOrigin``): instants in the
    /// session's values are written and read as seconds from it.
    public static let sessionRecordingOrigin = CodingUserInfoKey(rawValue: "SharedSession.recordingOrigin")!
    /// With `true`, instants are left out of the session's values when encoding: the normalized form
    /// a replay compares events in.
    package static let sessionRecordingOmitsInstants = CodingUserInfoKey(rawValue: "SharedSession.omitsInstants")!
}

extension Encoder {
    /// Whether this is the normalized form replays compare, without instants.
    var omitsInstants: Bool { userInfo[.sessionRecordingOmitsInstants] as? Bool == true }
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

    static func of(_ userInfo: [CodingUserInfoKey: Any]) -> RecordingTimeOrigin {
        userInfo[.sessionRecordingOrigin] as? RecordingTimeOrigin ?? .process
    }
}

/// How a value is written as a JSON object: its fields, or for an enum, `{"kind": "<case>", <its
/// values by name>}` with one ``Shape`` per case. A type's `Codable` conformance hands both
/// directions to its form.
struct JSONForm<Value>: Sendable {
    /// One shape the value can take: an enum's case (under its `kind`), or a struct's fields.
    struct Shape: Sendable {
        let kind: String?
        let read: @Sendable (KeyedDecodingContainer<JSONKey>, any Decoder) throws -> Value
        /// Writes the value if it has this shape; `false` if it has another.
        let write: @Sendable (Value, inout KeyedEncodingContainer<JSONKey>, any Encoder) throws -> Bool
    }

    /// What the value is called in an error ("input", "event").
    private let what: String
    private let shapes: [Shape]
    private let byKind: [String: Shape]

    /// An enum: one shape per case, each a ``Shape/case(_:_:make:match:)``.
    init(kinds what: String, _ shapes: [Shape]) {
        self.what = what
        self.shapes = shapes
        byKind = Dictionary(uniqueKeysWithValues: shapes.map { ($0.kind ?? "", $0) })
    }

    /// A struct: its fields' keys, how to make it from them (an initializer that validates may throw
    /// a `SessionError`) and its parts in the same order.
    init<each F: RecordedField>(
        object what: String, _ fields: repeat Field<each F>, make: @escaping @Sendable (repeat each F) throws -> Value,
        parts: @escaping @Sendable (Value) -> (repeat each F)
    ) {
        self.what = what
        shapes = [Shape(nil, repeat each fields, make: make, match: { parts($0) })]
        byKind = [:]
    }

    func decode(from decoder: any Decoder) throws -> Value {
        let container = try decoder.container(keyedBy: JSONKey.self)
        guard shapes.first?.kind != nil else { return try shapes[0].read(container, decoder) }
        let kind = try container.decode(String.self, forKey: "kind")
        guard let shape = byKind[kind] else {
            throw DecodingError.dataCorruptedError(
                forKey: "kind", in: container, debugDescription: "unknown \(what) kind \"\(kind)\"")
        }
        return try shape.read(container, decoder)
    }

    /// Writes `value` in its shape; a case the form does not list is an error that names it (the
    /// golden-file test records every input, so a case added without its form fails there).
    func encode(_ value: Value, to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        for shape in shapes where try shape.write(value, &container, encoder) { return }
        throw EncodingError.invalidValue(
            value,
            .init(
                codingPath: encoder.codingPath,
                debugDescription: "the \(what) \(value) has no JSON form: add its case to the type's form"))
    }
}

extension JSONForm.Shape {
    /// A case with values: its kind, the keys of its values in order, the case itself (`make`) and how
    /// to take a value of that case apart (`match`, `nil` for another case).
    static func `case`<each F: RecordedField>(
        _ kind: String, _ fields: repeat Field<each F>, make: @escaping @Sendable (repeat each F) throws -> Value,
        match: @escaping @Sendable (Value) -> (repeat each F)?
    ) -> Self {
        Self(kind, repeat each fields, make: make, match: match)
    }

    /// A case without values.
    static func `case`(_ kind: String, _ value: Value) -> Self where Value: Equatable & Sendable {
        Self(kind: kind, read: { _, _ in value }) { candidate, container, _ in
            guard candidate == value else { return false }
            try container.encode(kind, forKey: "kind")
            return true
        }
    }

    fileprivate init<each F: RecordedField>(
        _ kind: String?, _ fields: repeat Field<each F>, make: @escaping @Sendable (repeat each F) throws -> Value,
        match: @escaping @Sendable (Value) -> (repeat each F)?
    ) {
        let fields = (repeat each fields)
        self.init(kind: kind) { container, decoder in
            do {
                return try make(repeat try (each fields).read(container, decoder))
            } catch let error as SessionError {
                // A validating initializer refused the values: the value is malformed, not the JSON.
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: error.message))
            }
        } write: { value, container, encoder in
            guard let parts = match(value) else { return false }
            if let kind { try container.encode(kind, forKey: "kind") }
            repeat try (each fields).write(each parts, &container, encoder)
            return true
        }
    }
}
