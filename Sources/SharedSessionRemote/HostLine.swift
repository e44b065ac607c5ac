import Foundation
import SharedSession
import SharedSessionCoding

/// A line the host sent, as the unit's connection reads it: a message, or an event left undecoded
/// because nobody listens to the unit's events.
enum HostLine: Sendable {
    case message(HostMessage)
    /// An `{"event": …}` line whose event was not decoded.
    case unreadEvent
}

/// An event read only as far as knowing it is one: its value is not decoded.
struct UnreadEvent: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// One line the host sent, read once by `JSONDecoder`: its keys say which message it is, then that
/// message alone is decoded, its event as `Event` (a `SessionEvent`, or an ``UnreadEvent`` that decodes
/// nothing). The version picks the replies' shape (see `RemoteProtocol`): version 1 tells a reply's
/// outcome by the fields beside `reply`, version 2 by the one key that names it. Any other failure is
/// thrown as a `SessionError` naming it.
struct HostEnvelope<Event: Decodable>: Decodable {
    /// The message, with `event` in place of an event.
    let message: Message

    enum Message {
        case other(HostMessage)
        case event(Event)
    }

    static var messageKinds: [String] { ["event", "reply", "welcome", "refused", "eventsLost", "error"] }
    static var versionTwoOutcomes: [String] { ["granted", "snapshot", "done", "failed"] }

    init(from decoder: any Decoder) throws {
        let version = decoder.userInfo[RemoteProtocol.hostLineVersionKey] as? Int ?? 1
        let container = try decoder.container(keyedBy: AnyKey.self)
        let keys = Set(container.allKeys.map(\.stringValue))
        let known = Self.messageKinds.filter(keys.contains)
        // Version 1 took the first it knew, in this order; version 2 has one message a line.
        guard let kind = known.first, version == 1 || known.count == 1 else {
            throw RemoteProtocol.violation(
                known.isEmpty
                    ? "unknown host message with keys \(keys.sorted())"
                    : "one host line holds \(known.joined(separator: " and ")): a host sends one message per line")
        }
        do {
            message = try Self.message(kind, in: container, version: version)
        } catch let error as SessionError where error.code == .protocolViolation {
            throw error
        } catch {
            throw RemoteProtocol.violation("malformed host message: \(RemoteProtocol.describe(error))")
        }
    }

    private static func message(_ kind: String, in container: KeyedDecodingContainer<AnyKey>, version: Int) throws
        -> Message
    {
        let key = AnyKey(kind)
        switch kind {
        case "event": return .event(try container.decode(Event.self, forKey: key))
        case "reply":
            let id = try container.decode(Int.self, forKey: key)
            return .other(.reply(id: id, try version == 1 ? versionOneReply(container) : versionTwoReply(container)))
        case "welcome": return .other(.welcome(try container.decode(Welcome.self, forKey: key)))
        case "refused": return .other(.refused(try container.decode(SessionError.self, forKey: key)))
        case "eventsLost": return .other(.eventsLost(try container.decode(Int.self, forKey: key)))
        default:
            let error = try container.decode(SessionError.self, forKey: key)
            return .other(.error(error, closing: try container.decodeIfPresent(Bool.self, forKey: "closing") ?? false))
        }
    }

    /// `{"reply": 3, "lease": 12, "type": "voice"}`, `"snapshot"`, `"error"`, or nothing beside `reply`
    /// for done.
    private static func versionOneReply(_ container: KeyedDecodingContainer<AnyKey>) throws -> Reply {
        let lease = try container.decodeIfPresent(LeaseID.self, forKey: "lease")
        let type = try container.decodeIfPresent(AudioSessionType.self, forKey: "type")
        let snapshot = try container.decodeIfPresent(SessionSnapshot.self, forKey: "snapshot")
        if let error = try container.decodeIfPresent(SessionError.self, forKey: "error") { return .failed(error) }
        if let snapshot { return .snapshot(snapshot) }
        if let lease { return .granted(lease, type: type) }
        return .done
    }

    /// `{"reply": 3, "granted": {"lease": 12, "type": "voice"}}`, `"snapshot"`, `"failed"` or `"done"`:
    /// exactly one.
    private static func versionTwoReply(_ container: KeyedDecodingContainer<AnyKey>) throws -> Reply {
        let outcomes = versionTwoOutcomes.filter { container.contains(AnyKey($0)) }
        guard outcomes.count == 1, let outcome = outcomes.first else {
            throw RemoteProtocol.violation(
                "a reply holds \(outcomes.isEmpty ? "no outcome" : outcomes.joined(separator: " and ")): "
                    + "it holds one of granted, snapshot, done or failed")
        }
        let key = AnyKey(outcome)
        switch outcome {
        case "granted":
            let granted = try container.decode(Granted.self, forKey: key)
            return .granted(granted.lease, type: granted.type)
        case "snapshot": return .snapshot(try container.decode(SessionSnapshot.self, forKey: key))
        case "failed": return .failed(try container.decode(SessionError.self, forKey: key))
        default:
            _ = try container.decode(UnitEnvelope.Empty.self, forKey: key)
            return .done
        }
    }

    /// A version 2 reply's `granted`: the lease's id, and for a session lease the type it was granted as.
    struct Granted: Codable {
        var lease: LeaseID
        var type: AudioSessionType?
    }
}

/// The lines of a host's messages, to encode.
enum HostLineShape {
    struct Welcome: Encodable { let welcome: SharedSessionRemote.Welcome }
    struct Refused: Encodable { let refused: SessionError }
    struct Event: Encodable { let event: SessionEvent }
    struct EventsLost: Encodable { let eventsLost: Int }
    struct Error: Encodable {
        let error: SessionError
        let closing: Bool?
    }

    /// Version 1: the outcome told by which fields are beside `reply` (none for done).
    struct VersionOneReply: Encodable {
        var reply: Int
        var lease: LeaseID? = nil
        var type: AudioSessionType? = nil
        var snapshot: SessionSnapshot? = nil
        var error: SessionError? = nil
    }

    /// Version 2: the outcome named by its key.
    struct VersionTwoReply: Encodable {
        let id: Int
        let outcome: SharedSessionRemote.Reply

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(id, forKey: "reply")
            switch outcome {
            case .done: try container.encode(UnitEnvelope.Empty(), forKey: "done")
            case .granted(let lease, let type):
                try container.encode(HostEnvelope<UnreadEvent>.Granted(lease: lease, type: type), forKey: "granted")
            case .snapshot(let snapshot): try container.encode(snapshot, forKey: "snapshot")
            case .failed(let error): try container.encode(error, forKey: "failed")
            }
        }
    }
}
