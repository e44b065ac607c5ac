public import SharedSession
import SharedSessionCoding

/// What a unit asks of its host: the five calls a unit makes on the session, in its own name, and the
/// snapshot and a clean leave.
///
/// A request says what the unit asks, nothing more: the lease ids and causes the host's session gives
/// and records are the host's, and its reply (``Reply``) carries the id granted, or the `SessionError`
/// that refused the request.
public enum UnitRequest: Sendable, Hashable {
    /// A session of `type`, as `SharedSession/acquire(_:owner:)`; `owner` is the connection's own name
    /// (on version 1's wire another name is refused, and the connection closed; version 2's carries
    /// none, and the host gives the connection's).
    case acquire(AudioSessionType, owner: String)
    /// The release of the session lease `id` the host granted; `dropped` when the unit let go of the
    /// lease without releasing it.
    case releaseLease(LeaseID, dropped: Bool)
    /// A duck or pause of the main stream, as `SharedSession/duck(_:)`; the request's owner is the
    /// connection's own name.
    case duck(DuckRequest)
    /// The release of the duck lease `id` the host granted; `dropped` as for ``releaseLease(_:dropped:)``.
    case releaseDuck(LeaseID, dropped: Bool)
    /// A release with nothing to release (an unbalanced disable call of the delegate), named `what`,
    /// for the host's record: the session emits `releaseIgnored` for `owner`, the connection's own name.
    case ignoredRelease(owner: String, what: String)
    /// The session's snapshot.
    case snapshot
    /// A clean leave: the host gives back everything the unit holds, replies, and closes.
    case leave
}

/// The `input` of a request line of protocol version 1: a unit's call in the JSON form a recording
/// gives the session's input of that kind, `{"kind": "<case>", <its values by name>}`. The fields a
/// unit has no say in are on version 1's wire all the same (version 2 has none of them): `acquire` and
/// `duck` carry a placeholder `lease` (0, read and ignored), and `ignoredRelease` the `cause` (the
/// unit's own; read and ignored, as the host records its own cause).
/// Only the values' own codings are used (`AudioSessionType`, `LeaseID`, `DuckRequest`, `EventCause`),
/// not the session inputs'.
struct WireInput: Codable {
    let request: UnitRequest

    init(_ request: UnitRequest) { self.request = request }

    private enum Key: String, CodingKey {
        case kind, type, owner, lease, request, dropped, what, cause
    }

    /// The kinds of the session's inputs only the host sends (protocol version 1): a unit that sends one
    /// is refused as such, rather than told the kind is unknown.
    static let hostOnlyKinds: Set<String> = [
        "expireDeadlines", "setMainVolume", "play", "pause", "suspend", "wakeFromSuspend", "system", "engine",
        "openStream", "openStreamRefused", "closeStream", "setStreamVolume", "rejected", "activationOutcome",
        "captureOutcome", "unitReleased", "close",
    ]

    /// A well-formed line that asks for an input only the host sends.
    struct HostOnly: Error {
        let kind: String
    }

    // The fields are read in the order a recording's reader reads them, so a malformed line is refused
    // with the message it always had.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let kind = try container.decode(String.self, forKey: .kind)
        switch kind {
        case "acquire":
            let type = try container.decode(AudioSessionType.self, forKey: .type)
            let owner = try container.decode(String.self, forKey: .owner)
            _ = try container.decode(LeaseID.self, forKey: .lease)
            request = .acquire(type, owner: owner)
        case "releaseLease":
            request = .releaseLease(
                try container.decode(LeaseID.self, forKey: .lease),
                dropped: try container.decode(Bool.self, forKey: .dropped))
        case "duck":
            let duck = try container.decode(DuckRequest.self, forKey: .request)
            _ = try container.decode(LeaseID.self, forKey: .lease)
            request = .duck(duck)
        case "releaseDuck":
            request = .releaseDuck(
                try container.decode(LeaseID.self, forKey: .lease),
                dropped: try container.decode(Bool.self, forKey: .dropped))
        case "ignoredRelease":
            let owner = try container.decode(String.self, forKey: .owner)
            let what = try container.decode(String.self, forKey: .what)
            _ = try container.decode(EventCause.self, forKey: .cause)
            request = .ignoredRelease(owner: owner, what: what)
        default:
            if Self.hostOnlyKinds.contains(kind) { throw HostOnly(kind: kind) }
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container, debugDescription: "unknown input kind \"\(kind)\"")
        }
    }

    /// The `"lease"` field of an acquire or a duck: version 1 of the protocol has it (a unit sends 0; the
    /// host gives the id and ignores it), so it is written as every version 1 unit writes it.
    private static let versionOneLeaseField: UInt64 = 0

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch request {
        case .acquire(let type, let owner):
            try container.encode("acquire", forKey: .kind)
            try container.encode(type, forKey: .type)
            try container.encode(owner, forKey: .owner)
            try container.encode(Self.versionOneLeaseField, forKey: .lease)
        case .releaseLease(let id, let dropped):
            try container.encode("releaseLease", forKey: .kind)
            try container.encode(id, forKey: .lease)
            try container.encode(dropped, forKey: .dropped)
        case .duck(let duck):
            try container.encode("duck", forKey: .kind)
            try container.encode(duck, forKey: .request)
            try container.encode(Self.versionOneLeaseField, forKey: .lease)
        case .releaseDuck(let id, let dropped):
            try container.encode("releaseDuck", forKey: .kind)
            try container.encode(id, forKey: .lease)
            try container.encode(dropped, forKey: .dropped)
        case .ignoredRelease(let owner, let what):
            try container.encode("ignoredRelease", forKey: .kind)
            try container.encode(owner, forKey: .owner)
            try container.encode(what, forKey: .what)
            try container.encode(EventCause.unit(owner: owner), forKey: .cause)
        case .snapshot, .leave:
            throw EncodingError.invalidValue(
                request, .init(codingPath: encoder.codingPath, debugDescription: "\(request) is not an input"))
        }
    }
}
