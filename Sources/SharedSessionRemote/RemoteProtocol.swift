import Foundation
import NIOCore
import NIOExtras
public import SharedSession
import SharedSessionCoding

#if canImport(Glibc)
    import Glibc
#endif

/// The line protocol between a ``SessionServer`` and a ``RemoteSession``: one JSON object per line
/// (`\n`), its values in the coding of SharedSessionCoding (the one Recording writes), so a recording of
/// a host with remote units replays like any other.
///
/// Each line is one message, named by its keys, and read once. A unit's first line is its hello,
/// `{"hello": {"protocol": 2, "owner": "watch-party"}}`; the host answers each connection in the
/// version of its hello (1 or 2: ``supportedVersions``), and refuses another with a message naming both.
///
/// Version 2, which ``RemoteSession`` speaks: a request is `{"id": 3, "<kind>": <values>}`, with no
/// owner (every request acts under the connection's owner name) and no lease but the one released:
/// `{"id": 3, "acquire": {"type": "voice"}}`, `{"id": 4, "duck": {"style": {"kind": "pause"},
/// "maximumHold": 1.5}}`, `{"id": 5, "releaseLease": {"lease": 12, "dropped": false}}`, `releaseDuck`
/// likewise, `{"id": 6, "ignoredRelease": {"what": "…"}}`, `{"id": 7, "snapshot": {}}`,
/// `{"id": 8, "leave": {}}`. A reply names its outcome: `{"reply": 3, "granted": {"lease": 12, "type":
/// "voice"}}`, `{"reply": 7, "snapshot": <SessionSnapshot>}`, `{"reply": 8, "done": {}}` or
/// `{"reply": 3, "failed": <SessionError>}`.
///
/// Version 1, which units built before version 2 speak: a request's `input` in the form a recording
/// gives the session's input of its kind, `{"id": 3, "input": {"kind": "acquire", "type": "voice",
/// "owner": "watch-party", "lease": 0}}` (an `owner` that must be the connection's, and a `lease` of 0 on
/// acquire and duck), and replies `{"reply": 3, "lease": 12, "type": "voice"}`, `{"reply": 4, "snapshot":
/// …}`, `{"reply": 5}` or `{"reply": 3, "error": <SessionError>}`.
///
/// In both, the host sends `{"welcome": {...}}` (or `{"refused": <SessionError>}` and closes), every
/// session event as `{"event": <SessionEvent>}` (the same bytes to every unit), `{"eventsLost": 17}`
/// after events were dropped for a unit that did not read them, and `{"error": <SessionError>,
/// "closing": true}` for a line it could not take.
public enum RemoteProtocol {
    /// The version this build's ``RemoteSession`` speaks.
    public static let version = 2

    /// The versions a ``SessionServer`` of this build answers: a hello with another is refused with a
    /// message naming it and these.
    public static let supportedVersions = 1...2

    /// The longest line either side accepts, in bytes without its newline (64 KiB). A longer line is a
    /// `protocolViolation`, and the connection that sent it is closed: what follows it cannot be framed.
    public static let maximumLineLength = 64 * 1024

    /// The socket a host serves on by default: `$XDG_RUNTIME_DIR/sharedsession-<name>.sock`, or
    /// `/run/user/<uid>/…` when the variable is not set.
    ///
    /// - Throws: `SessionError` with code `invalidValue` if `name` is empty or holds a `/`.
    public static func defaultSocketPath(name: String) throws(SessionError) -> String {
        guard !name.isEmpty, !name.contains("/") else {
            throw SessionError(
                code: .invalidValue, message: "socket name \"\(name)\" must be non-empty and hold no /")
        }
        let directory = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        return "\(directory ?? "/run/user/\(getuid())")/sharedsession-\(name).sock"
    }

    // MARK: Lines

    /// Reads one line a unit of version 1 sent (without its newline): the door a fuzzer or a test calls.
    ///
    /// - Throws: `SessionError` with code `protocolViolation` naming what is wrong: a line over
    ///   ``maximumLineLength``, not JSON, not an object, no known message in it, a message whose
    ///   fields are malformed, or an input only the host sends (`setMainVolume`, `play`…).
    public static func decodeUnitLine(_ line: some Collection<UInt8>) throws(SessionError) -> UnitMessage {
        try decodeUnitLine(line, version: 1, owner: "")
    }

    /// Reads one line a unit sent on a connection whose hello said `version`, and whose owner name is
    /// `owner`: a version 2 request names no owner, and acts under the connection's. Each version reads
    /// its own requests only; a version other than 1 or 2 reads a request of either, as the host reads
    /// a line before the hello.
    ///
    /// - Throws: as ``decodeUnitLine(_:)``.
    public static func decodeUnitLine(_ line: some Collection<UInt8>, version: Int, owner: String) throws(SessionError)
        -> UnitMessage
    {
        do {
            return try readUnitLine(line, reading: UnitLineReading(version: version, owner: owner))
        } catch {
            switch error {
            case .unreadable(let error, _), .hostOnly(let error, _): throw error
            }
        }
    }

    /// Why the host did not take a unit's line, with the line's `id` when it could be read.
    enum UnitLineRefusal: Error {
        /// The line is not a message: it counts toward the unit's ``SessionServer/Limits/violationsPerUnit``.
        case unreadable(SessionError, id: Int?)
        /// A well-formed request for an input only the host sends: refused, but nothing in the line is
        /// broken, so it does not count.
        case hostOnly(SessionError, id: Int?)
    }

    /// Reads one line a unit sent, once, as ``decodeUnitLine(_:version:owner:)`` does, saying which kind
    /// of refusal it is.
    static func readUnitLine(_ line: some Collection<UInt8>, reading: UnitLineReading) throws(UnitLineRefusal)
        -> UnitMessage
    {
        do {
            return try decode(UnitEnvelope.self, line, from: "unit", [UnitLineReading.userInfoKey: reading]).message
        } catch let refusal as UnitLineRefusal {
            throw refusal
        } catch {
            throw .unreadable(error as? SessionError ?? violation("\(error)"), id: nil)
        }
    }

    /// Reads one line a version 1 host sent (without its newline).
    ///
    /// - Throws: `SessionError` with code `protocolViolation` naming what is wrong.
    public static func decodeHostLine(_ line: some Collection<UInt8>) throws(SessionError) -> HostMessage {
        try decodeHostLine(line, version: 1)
    }

    /// Reads one line a host sent (without its newline) to a unit whose hello said `version`.
    ///
    /// - Throws: `SessionError` with code `protocolViolation` naming what is wrong.
    public static func decodeHostLine(_ line: some Collection<UInt8>, version: Int) throws(SessionError)
        -> HostMessage
    {
        guard case .message(let message) = try readHostLine(line, version: version, decodingEvents: true) else {
            preconditionFailure("an event line is decoded when asked to be")
        }
        return message
    }

    static let hostLineVersionKey = CodingUserInfoKey(rawValue: "SharedSessionRemote.hostLineVersion")!

    /// Reads one line a host sent, once: with `decodingEvents` false an event line is only known as
    /// one (``HostLine/unreadEvent``), its event not decoded.
    static func readHostLine(_ line: some Collection<UInt8>, version: Int, decodingEvents: Bool) throws(SessionError)
        -> HostLine
    {
        // An event and nothing else: known by its one key, its value not decoded at all, and nothing
        // allocated (not even the decoder's user info): the line of every event, for every unit.
        if !decodingEvents, line.count <= maximumLineLength, TopLevelKeys.isOnly("event", in: line) {
            return .unreadEvent
        }
        do {
            let userInfo: [CodingUserInfoKey: any Sendable] = [hostLineVersionKey: version]
            guard decodingEvents else {
                let envelope = try decode(HostEnvelope<UnreadEvent>.self, line, from: "host", userInfo)
                switch envelope.message {
                case .event: return .unreadEvent
                case .other(let message): return .message(message)
                }
            }
            switch try decode(HostEnvelope<SessionEvent>.self, line, from: "host", userInfo).message {
            case .event(let event): return .message(.event(event))
            case .other(let message): return .message(message)
            }
        } catch {
            throw error as? SessionError ?? violation("malformed host message: \(describe(error))")
        }
    }

    /// The line (with its newline) of a unit's message, in version 1.
    public static func encode(_ message: UnitMessage) -> [UInt8] { encode(message, version: 1) }

    /// The line (with its newline) of a unit's message, in `version` (1 or 2).
    public static func encode(_ message: UnitMessage, version: Int) -> [UInt8] {
        switch message {
        case .hello(let version, let owner):
            line(HelloLine(hello: .init(protocolVersion: version, owner: owner)))
        case .request(let id, let request) where version >= 2: line(VersionTwoRequestLine(id: id, request: request))
        case .request(let id, .snapshot): line(RequestLine(id: id, input: nil, snapshot: .init(), leave: nil))
        case .request(let id, .leave): line(RequestLine(id: id, input: nil, snapshot: nil, leave: .init()))
        case .request(let id, let input): line(RequestLine(id: id, input: WireInput(input), snapshot: nil, leave: nil))
        }
    }

    /// The line (with its newline) of a host's message, in version 1.
    public static func encode(_ message: HostMessage) -> [UInt8] { encode(message, version: 1) }

    /// The line (with its newline) of a host's message to a unit whose hello said `version` (1 or 2):
    /// only a reply differs between them.
    public static func encode(_ message: HostMessage, version: Int) -> [UInt8] {
        switch message {
        case .welcome(let welcome): line(HostLineShape.Welcome(welcome: welcome))
        case .refused(let error): line(HostLineShape.Refused(refused: error))
        case .reply(let id, let reply) where version >= 2: line(HostLineShape.VersionTwoReply(id: id, outcome: reply))
        case .reply(let id, let reply):
            switch reply {
            case .done: line(HostLineShape.VersionOneReply(reply: id))
            case .granted(let lease, let type): line(HostLineShape.VersionOneReply(reply: id, lease: lease, type: type))
            case .snapshot(let snapshot): line(HostLineShape.VersionOneReply(reply: id, snapshot: snapshot))
            case .failed(let error): line(HostLineShape.VersionOneReply(reply: id, error: error))
            }
        case .event(let event): line(HostLineShape.Event(event: event))
        case .eventsLost(let count): line(HostLineShape.EventsLost(eventsLost: count))
        case .error(let error, let closing): line(HostLineShape.Error(error: error, closing: closing))
        }
    }

    // MARK: Framing

    /// The inbound handler that frames either side's lines: swift-nio-extras' `LineBasedFrameDecoder`
    /// (each line without its `\n`, and without a `\r` before it) in NIO's `ByteToMessageHandler`, whose
    /// buffer is capped at ``maximumLineLength``. The decoder has no limit of its own; the handler's cap
    /// is NIO's way to bound what a peer leaves unterminated: past it the handler throws
    /// `ByteToMessageDecoderError.PayloadTooLargeError`, which each side turns into a
    /// `protocolViolation` and a close. A longer line that arrives whole, newline and all, is passed on
    /// and refused by its reader, as one over the limit.
    ///
    /// Outbound there is no encoder handler: each side writes the bytes of `encode(_:)`
    /// (which end in the newline) as a `ByteBuffer`. The host encodes each event once and writes that one
    /// buffer to every unit, which a `MessageToByteEncoder` in each connection's pipeline would undo.
    static func lineFramer() -> ByteToMessageHandler<LineBasedFrameDecoder> {
        ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: maximumLineLength)
    }

    static func violation(_ message: String) -> SessionError {
        SessionError(code: .protocolViolation, message: message)
    }

    /// Decodes `type` from a line of `side`'s, once. Not JSON, or not an object, is a `SessionError`
    /// naming it; what the type's own decoding throws is thrown as it is.
    private static func decode<Line: Decodable>(
        _ type: Line.Type, _ line: some Collection<UInt8>, from side: String,
        _ userInfo: [CodingUserInfoKey: any Sendable]
    ) throws -> Line {
        guard line.count <= maximumLineLength else {
            throw violation(
                "a \(side) line of \(line.count) bytes is over the limit of \(maximumLineLength): keep lines shorter")
        }
        let decoder = JSONDecoder()
        decoder.userInfo = userInfo
        decoder.userInfo[.sessionRecordingOrigin] = origin
        do {
            return try decoder.decode(type, from: Data(line))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw violation("a \(side) line is not JSON (\(line.count) bytes): send one JSON object per line")
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            throw violation("a \(side) line is JSON but not an object: send one JSON object per line")
        } catch DecodingError.valueNotFound(_, let context) where context.codingPath.isEmpty {
            throw violation("a \(side) line is JSON but not an object: send one JSON object per line")
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
            DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, let context):
            let path = (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
            return "\(path) is missing"
        default: return "\(error)"
        }
    }

    // The instants in snapshots and events travel as seconds since the machine booted (the zero of
    // the clock `ContinuousClock` reads on Linux, CLOCK_BOOTTIME), so both ends read the same instant.
    static let origin: RecordingTimeOrigin = {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return RecordingTimeOrigin(.now - (.seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)))
    }()

    private static func line(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.userInfo[.sessionRecordingOrigin] = origin
        // Every value on the wire has a JSON form (the recording's golden test writes each one).
        guard var bytes = try? Array(encoder.encode(value)) else {
            preconditionFailure("\(value) has no JSON form")
        }
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    // MARK: The unit's version 1 lines

    private struct HelloLine: Encodable { let hello: UnitEnvelope.Hello }

    private struct RequestLine: Encodable {
        let id: Int
        let input: WireInput?
        let snapshot: UnitEnvelope.Empty?
        let leave: UnitEnvelope.Empty?
    }
}

/// A line a unit sends its host.
public enum UnitMessage: Sendable, Hashable {
    /// The first line: the protocol version the unit speaks and the owner name it asks to act as.
    case hello(protocolVersion: Int, owner: String)
    /// A request; its reply carries `id` back.
    case request(id: Int, UnitRequest)
}

/// A line the host sends a unit.
public enum HostMessage: Sendable, Hashable {
    /// The hello was accepted.
    case welcome(Welcome)
    /// The hello was refused (another user, an owner the policy does not allow, another version); the
    /// host closes the connection.
    case refused(SessionError)
    /// The answer to the request with `id`.
    case reply(id: Int, Reply)
    /// An event of the session, as every in-process listener gets it.
    case event(SessionEvent)
    /// This many events were dropped because the unit did not read them fast enough: its view of the
    /// session is stale, and a ``UnitRequest/snapshot`` brings it up to date.
    case eventsLost(Int)
    /// A line the host could not take; with `closing`, the host closes the connection after it.
    case error(SessionError, closing: Bool)
}

/// The host's answer to one request.
public enum Reply: Sendable, Hashable {
    /// Done (a release, a leave).
    case done
    /// A lease was granted: its id, and for a session lease the type it was granted as (a unit that
    /// may not take voice gets generic).
    case granted(LeaseID, type: AudioSessionType?)
    /// The session's state.
    case snapshot(SessionSnapshot)
    /// Refused; nothing the unit or anyone else held changed.
    case failed(SessionError)
}

/// What the host tells a unit it accepted.
public struct Welcome: Sendable, Hashable, Codable {
    /// The protocol version both speak.
    public let protocolVersion: Int
    /// The owner name the host gave the connection: every lease the unit takes carries it.
    public let owner: String
    /// The connection's number on the host, for its logs.
    public let connection: Int
    /// The unit holds nothing: always `true` for a new connection, said so that a unit reconnecting
    /// after a crash or a dropped connection knows its earlier leases are gone.
    public let startsFromNothing: Bool
    /// When an earlier connection under this owner name ended, what it held and why it was given back
    /// (`"2 session(s) and 1 duck(s) given back: the connection closed"`); `nil` for a first connection.
    public let previous: String?

    /// A welcome.
    public init(protocolVersion: Int, owner: String, connection: Int, previous: String?) {
        self.protocolVersion = protocolVersion
        self.owner = owner
        self.connection = connection
        self.startsFromNothing = true
        self.previous = previous
    }

    enum CodingKeys: String, CodingKey {
        case protocolVersion = "protocol"
        case owner, connection, startsFromNothing, previous
    }
}
