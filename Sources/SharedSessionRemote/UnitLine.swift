import Foundation
import SharedSession
import SharedSessionCoding

/// How the host reads a unit's line: the version of the connection's hello (`nil` before it, when a
/// request of either version is known for one) and the connection's owner name, which a version 2
/// request acts under without naming it.
struct UnitLineReading: Sendable {
    let version: Int?
    let owner: String

    static let userInfoKey = CodingUserInfoKey(rawValue: "SharedSessionRemote.unitLineReading")!

    /// The kinds of a version 2 request: each is the key of its line, beside the `id`.
    static let versionTwoKinds = ["acquire", "releaseLease", "duck", "releaseDuck", "ignoredRelease"]

    /// The keys that name a message of this version, in the order a refusal lists them.
    var kinds: [String] {
        switch version {
        case 1: ["hello", "input", "snapshot", "leave"]
        case 2: ["hello"] + Self.versionTwoKinds + ["snapshot", "leave"]
        default: ["hello", "input"] + Self.versionTwoKinds + ["snapshot", "leave"]
        }
    }

    /// What a refusal says a unit sends.
    var kindList: String {
        let kinds = kinds
        let sends = kinds.dropLast().joined(separator: ", ") + " or " + kinds[kinds.count - 1]
        return version == 2 ? "a unit of protocol version 2 sends \(sends)" : "a unit sends \(sends)"
    }
}

/// One line a unit sent, read once by `JSONDecoder`: its keys say which message it is (exactly one of
/// ``UnitLineReading/kinds``), then that message alone is decoded. A line it cannot take is thrown as a
/// `RemoteProtocol.UnitLineRefusal` that carries the line's `id` when it has one, so the refusal reaches
/// the call waiting for it.
struct UnitEnvelope: Decodable {
    let message: UnitMessage

    init(from decoder: any Decoder) throws {
        let reading =
            decoder.userInfo[UnitLineReading.userInfoKey] as? UnitLineReading ?? .init(version: 1, owner: "")
        let container = try decoder.container(keyedBy: AnyKey.self)
        let keys = Set(container.allKeys.map(\.stringValue))
        let id = try? container.decodeIfPresent(Int.self, forKey: "id")
        let known = reading.kinds.filter(keys.contains)
        guard known.count == 1, let kind = known.first else {
            let reason =
                known.isEmpty
                ? "unknown message with keys \(keys.sorted()): \(reading.kindList)"
                : "one line holds \(known.joined(separator: " and ")): send one message per line"
            throw RemoteProtocol.UnitLineRefusal.unreadable(RemoteProtocol.violation(reason), id: id)
        }
        do {
            message = try Self.message(kind, in: container, owner: reading.owner)
        } catch let error as WireInput.HostOnly {
            throw RemoteProtocol.UnitLineRefusal.hostOnly(
                RemoteProtocol.violation(
                    "a unit may not send the input \(error.kind): only acquire, releaseLease, duck, releaseDuck "
                        + "and ignoredRelease; the rest is the host's"),
                id: id)
        } catch {
            throw RemoteProtocol.UnitLineRefusal.unreadable(
                RemoteProtocol.violation("malformed \(kind) message: \(RemoteProtocol.describe(error))"), id: id)
        }
    }

    private static func message(
        _ kind: String, in container: KeyedDecodingContainer<AnyKey>, owner: String
    ) throws -> UnitMessage {
        if kind == "hello" {
            let hello = try container.decode(Hello.self, forKey: "hello")
            return .hello(protocolVersion: hello.protocolVersion, owner: hello.owner)
        }
        let id = try container.decode(Int.self, forKey: "id")
        let key = AnyKey(kind)
        switch kind {
        case "input":
            // `"input": null` names the message but holds none: a unit's line never traps its host.
            guard let input = try container.decodeIfPresent(WireInput.self, forKey: key) else {
                throw DecodingError.valueNotFound(
                    WireInput.self, .init(codingPath: [], debugDescription: "its input is null: send the input itself"))
            }
            return .request(id: id, input.request)
        case "snapshot", "leave":
            _ = try container.decodeIfPresent(Empty.self, forKey: key)
            return .request(id: id, kind == "snapshot" ? .snapshot : .leave)
        case "acquire":
            return .request(id: id, .acquire(try container.decode(Acquire.self, forKey: key).type, owner: owner))
        case "releaseLease":
            let release = try container.decode(Release.self, forKey: key)
            return .request(id: id, .releaseLease(release.lease, dropped: release.dropped))
        case "releaseDuck":
            let release = try container.decode(Release.self, forKey: key)
            return .request(id: id, .releaseDuck(release.lease, dropped: release.dropped))
        case "duck":
            let duck = try container.decode(Duck.self, forKey: key)
            return .request(id: id, .duck(DuckRequest(owner: owner, style: duck.style, maximumHold: duck.maximumHold)))
        default:
            let ignored = try container.decode(IgnoredRelease.self, forKey: key)
            return .request(id: id, .ignoredRelease(owner: owner, what: ignored.what))
        }
    }

    // MARK: The lines' shapes

    struct Hello: Codable {
        let protocolVersion: Int
        let owner: String
        enum CodingKeys: String, CodingKey {
            case protocolVersion = "protocol"
            case owner
        }
    }

    struct Empty: Codable {}

    /// `{"type": "voice"}`: the session's type; the owner is the connection's.
    struct Acquire: Codable {
        let type: AudioSessionType
    }

    /// `{"lease": 12, "dropped": false}`: the lease the host granted, and whether the unit let go of
    /// it without releasing it.
    struct Release: Codable {
        let lease: LeaseID
        let dropped: Bool
    }

    /// `{"style": {"kind": "pause"}, "maximumHold": 1.5}`: a `style` left out is a plain duck, a
    /// `maximumHold` (seconds) left out is none; the owner is the connection's.
    struct Duck: Codable {
        let style: DuckStyle
        let maximumHold: Duration?

        init(style: DuckStyle, maximumHold: Duration?) {
            self.style = style
            self.maximumHold = maximumHold
        }

        private enum CodingKeys: String, CodingKey {
            case style, maximumHold
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            style = try container.decodeIfPresent(DuckStyle.self, forKey: .style) ?? .duck(level: nil)
            guard let seconds = try container.decodeIfPresent(Double.self, forKey: .maximumHold) else {
                maximumHold = nil
                return
            }
            guard let hold = Duration(recordedSeconds: seconds) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .maximumHold, in: container,
                    debugDescription: "\(seconds) is not a duration in seconds")
            }
            maximumHold = hold
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(style, forKey: .style)
            try container.encodeIfPresent(maximumHold?.recordedSeconds, forKey: .maximumHold)
        }
    }

    /// `{"what": "disableAudioDucking() without a duck"}`: the release that had nothing to release.
    struct IgnoredRelease: Codable {
        let what: String
    }
}

/// A version 2 request line: `{"id": 3, "<kind>": <its values>}`.
struct VersionTwoRequestLine: Encodable {
    let id: Int
    let request: UnitRequest

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        try container.encode(id, forKey: "id")
        switch request {
        case .acquire(let type, _):
            try container.encode(UnitEnvelope.Acquire(type: type), forKey: "acquire")
        case .releaseLease(let lease, let dropped):
            try container.encode(UnitEnvelope.Release(lease: lease, dropped: dropped), forKey: "releaseLease")
        case .duck(let duck):
            try container.encode(
                UnitEnvelope.Duck(style: duck.style, maximumHold: duck.maximumHold), forKey: "duck")
        case .releaseDuck(let lease, let dropped):
            try container.encode(UnitEnvelope.Release(lease: lease, dropped: dropped), forKey: "releaseDuck")
        case .ignoredRelease(_, let what):
            try container.encode(UnitEnvelope.IgnoredRelease(what: what), forKey: "ignoredRelease")
        case .snapshot:
            try container.encode(UnitEnvelope.Empty(), forKey: "snapshot")
        case .leave:
            try container.encode(UnitEnvelope.Empty(), forKey: "leave")
        }
    }
}

/// A key read by its name: a line's keys are only known once read.
struct AnyKey: CodingKey, ExpressibleByStringLiteral {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init(stringLiteral name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
