import Foundation
import NIOCore
import NIOExtras
public import SharedSession
import SharedSessionCoding

#if canImport(Glibc)
    import Glibc
#endif

/// The line protocol between a ``SessionServer`` and a ``RemoteSession``: one JSON object per line
/// (`\n`), in the coding of SharedSessionCoding (the one Recording writes). A unit's calls travel in the
/// form a recording gives the session's inputs of their kind, and events, errors and snapshots as a
/// recording writes them, so a recording of a host with remote units replays like any other.
///
/// A unit sends:
/// - first, `{"hello": {"protocol": 1, "owner": "watch-party"}}`;
/// - then requests (``UnitRequest``), each with an `id` its reply carries back: `{"id": 3, "input":
///   {"kind": "acquire", "type": "voice", "owner": "watch-party", "lease": 0}}` (the kinds `acquire`,
///   `releaseLease`, `duck`, `releaseDuck` and `ignoredRelease`, in the unit's own name),
///   `{"id": 4, "snapshot": {}}`, or `{"id": 5, "leave": {}}`.
///
/// The host sends `{"welcome": {...}}` (or `{"refused": <SessionError>}` and closes), replies
/// `{"reply": 3, "lease": 12, "type": "voice"}`, `{"reply": 4, "snapshot": <SessionSnapshot>}`,
/// `{"reply": 5}` or `{"reply": 3, "error": <SessionError>}`, every session event as
/// `{"event": <SessionEvent>}`, `{"eventsLost": 17}` after events were dropped for a unit that did not
/// read them, and `{"error": <SessionError>, "closing": true}` for a line it could not take.
public enum RemoteProtocol {
    /// The version this build speaks; a hello with another is refused with a message naming both.
    public static let version = 1

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

    /// Reads one line a unit sent (without its newline): the door a fuzzer or a test calls.
    ///
    /// - Throws: `SessionError` with code `protocolViolation` naming what is wrong: a line over
    ///   ``maximumLineLength``, not JSON, not an object, no known message in it, a message whose
    ///   fields are malformed, or an input only the host sends (`setMainVolume`, `play`…).
    public static func decodeUnitLine(_ line: some Collection<UInt8>) throws(SessionError) -> UnitMessage {
        do {
            return try readUnitLine(line)
        } catch {
            switch error {
            case .unreadable(let error), .hostOnly(let error): throw error
            }
        }
    }

    /// Why the host did not take a unit's line.
    enum UnitLineRefusal: Error {
        /// The line is not a message: it counts toward the unit's ``SessionServer/Limits/violationsPerUnit``.
        case unreadable(SessionError)
        /// A well-formed request for an input only the host sends: refused, but nothing in the line is
        /// broken, so it does not count.
        case hostOnly(SessionError)
    }

    /// Reads one line a unit sent, as ``decodeUnitLine(_:)`` does, saying which kind of refusal it is.
    static func readUnitLine(_ line: some Collection<UInt8>) throws(UnitLineRefusal) -> UnitMessage {
        let object: [String: Any]
        do {
            object = try envelope(line, from: "unit")
        } catch {
            throw .unreadable(error)
        }
        let keys = Set(object.keys)
        let known = ["hello", "input", "snapshot", "leave"].filter(keys.contains)
        guard known.count == 1, let kind = known.first else {
            throw .unreadable(
                violation(
                    known.isEmpty
                        ? "unknown message with keys \(keys.sorted()): a unit sends hello, input, snapshot or leave"
                        : "one line holds \(known.joined(separator: " and ")): send one message per line"))
        }
        let data = Data(line)
        do {
            switch kind {
            case "hello":
                let hello = try decoder.decode(HelloLine.self, from: data).hello
                return .hello(protocolVersion: hello.protocolVersion, owner: hello.owner)
            default:
                let request = try decoder.decode(RequestLine.self, from: data)
                switch kind {
                case "input":
                    // `"input": null` names the message but holds none: a unit's line never traps its host.
                    guard let input = request.input else {
                        throw DecodingError.valueNotFound(
                            WireInput.self,
                            .init(codingPath: [], debugDescription: "its input is null: send the input itself"))
                    }
                    return .request(id: request.id, input.request)
                case "snapshot": return .request(id: request.id, .snapshot)
                default: return .request(id: request.id, .leave)
                }
            }
        } catch let error as WireInput.HostOnly {
            throw .hostOnly(
                violation(
                    "a unit may not send the input \(error.kind): only acquire, releaseLease, duck, releaseDuck and "
                        + "ignoredRelease; the rest is the host's"))
        } catch {
            throw .unreadable(violation("malformed \(kind) message: \(describe(error))"))
        }
    }

    /// Reads one line the host sent (without its newline).
    ///
    /// - Throws: `SessionError` with code `protocolViolation` naming what is wrong.
    public static func decodeHostLine(_ line: some Collection<UInt8>) throws(SessionError) -> HostMessage {
        let object = try envelope(line, from: "host")
        let data = Data(line)
        do {
            if object["event"] != nil { return .event(try decoder.decode(EventLine.self, from: data).event) }
            if object["reply"] != nil {
                let reply = try decoder.decode(ReplyLine.self, from: data)
                if let error = reply.error { return .reply(id: reply.reply, .failed(error)) }
                if let snapshot = reply.snapshot { return .reply(id: reply.reply, .snapshot(snapshot)) }
                if let lease = reply.lease { return .reply(id: reply.reply, .granted(lease, type: reply.type)) }
                return .reply(id: reply.reply, .done)
            }
            if object["welcome"] != nil { return .welcome(try decoder.decode(WelcomeLine.self, from: data).welcome) }
            if object["refused"] != nil { return .refused(try decoder.decode(RefusedLine.self, from: data).refused) }
            if object["eventsLost"] != nil {
                return .eventsLost(try decoder.decode(EventsLostLine.self, from: data).eventsLost)
            }
            if object["error"] != nil {
                let line = try decoder.decode(ErrorLine.self, from: data)
                return .error(line.error, closing: line.closing ?? false)
            }
        } catch {
            throw violation("malformed host message: \(describe(error))")
        }
        throw violation("unknown host message with keys \(object.keys.sorted())")
    }

    /// The line (with its newline) of a unit's message.
    public static func encode(_ message: UnitMessage) -> [UInt8] {
        switch message {
        case .hello(let version, let owner):
            line(HelloLine(hello: .init(protocolVersion: version, owner: owner)))
        case .request(let id, .snapshot): line(RequestLine(id: id, input: nil, snapshot: Empty(), leave: nil))
        case .request(let id, .leave): line(RequestLine(id: id, input: nil, snapshot: nil, leave: Empty()))
        case .request(let id, let input): line(RequestLine(id: id, input: WireInput(input), snapshot: nil, leave: nil))
        }
    }

    /// The line (with its newline) of a host's message.
    public static func encode(_ message: HostMessage) -> [UInt8] {
        switch message {
        case .welcome(let welcome): line(WelcomeLine(welcome: welcome))
        case .refused(let error): line(RefusedLine(refused: error))
        case .reply(let id, let reply):
            switch reply {
            case .done: line(ReplyLine(reply: id))
            case .granted(let lease, let type): line(ReplyLine(reply: id, lease: lease, type: type))
            case .snapshot(let snapshot): line(ReplyLine(reply: id, snapshot: snapshot))
            case .failed(let error): line(ReplyLine(reply: id, error: error))
            }
        case .event(let event): line(EventLine(event: event))
        case .eventsLost(let count): line(EventsLostLine(eventsLost: count))
        case .error(let error, let closing): line(ErrorLine(error: error, closing: closing))
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

    /// The line as a JSON object's top-level values, or why it is not one.
    private static func envelope(_ line: some Collection<UInt8>, from side: String) throws(SessionError) -> [String:
        Any]
    {
        guard line.count <= maximumLineLength else {
            throw violation(
                "a \(side) line of \(line.count) bytes is over the limit of \(maximumLineLength): keep lines shorter")
        }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed])
        } catch {
            throw violation("a \(side) line is not JSON (\(line.count) bytes): send one JSON object per line")
        }
        guard let object = parsed as? [String: Any] else {
            throw violation("a \(side) line is JSON but not an object: send one JSON object per line")
        }
        return object
    }

    private static func describe(_ error: any Error) -> String {
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

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[.sessionRecordingOrigin] = origin
        return decoder
    }

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

    // MARK: The lines' shapes

    private struct Empty: Codable {}

    private struct HelloLine: Codable {
        struct Hello: Codable {
            let protocolVersion: Int
            let owner: String
            enum CodingKeys: String, CodingKey {
                case protocolVersion = "protocol"
                case owner
            }
        }
        let hello: Hello
    }

    private struct RequestLine: Codable {
        let id: Int
        let input: WireInput?
        let snapshot: Empty?
        let leave: Empty?
    }

    private struct WelcomeLine: Codable { let welcome: Welcome }
    private struct RefusedLine: Codable { let refused: SessionError }
    private struct EventLine: Codable { let event: SessionEvent }
    private struct EventsLostLine: Codable { let eventsLost: Int }
    private struct ErrorLine: Codable {
        let error: SessionError
        let closing: Bool?
    }

    private struct ReplyLine: Codable {
        var reply: Int
        var lease: LeaseID? = nil
        var type: AudioSessionType? = nil
        var snapshot: SessionSnapshot? = nil
        var error: SessionError? = nil
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
