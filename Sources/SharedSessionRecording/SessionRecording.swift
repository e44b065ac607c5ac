public import Foundation
public import SharedSession
// The JSON forms a recording is written in (the Codable conformances of the core's values,
// RecordingTimeOrigin) live in SharedSessionCoding, which the remote protocol shares; they are this
// product's API, as they were before they moved there.
@_exported public import SharedSessionCoding

/// A session recording read back: the policy and format of the recorded session, and everything
/// that reached it and that it emitted, in order, as ``SessionRecorder`` wrote them.
///
/// The file is JSON Lines. The first line is the header,
/// `{"format": "sharedsession-recording", "version": 1, "sampleRate": 48000, "channels": 2, "policy": {...}}`;
/// every other line is an input, `{"t": seconds, "frame": frames, "input": {"kind": ...}}` (`frame`:
/// the engine's render position, when the recorder knew it), or an event, `{"t": seconds, "event":
/// {"kind": ..., "cause": {...}}}`, or the gains a render side had reached, `{"t": seconds, "frame":
/// frames, "levels": {"label": ..., "gains": [{"stream": id, "gain": g}]}}`. Times are seconds since the
/// recording started.
///
/// Reading refuses, with a `SessionError` of code `invalidRecording` whose message starts with
/// `line N:`, a line that is not JSON or lacks a field, a header of another format or of a newer
/// version, and an input that names a lease or stream the recording never opened.
public struct SessionRecording: Sendable {
    /// The `format` of the header line.
    public static let format = "sharedsession-recording"
    /// The newest format version this SharedSession reads and writes.
    public static let version = 1

    /// One line after the header.
    public struct Entry: Sendable, Hashable {
        /// The line number in the file, counting the header as line 1.
        public let line: Int
        /// When it reached the session, since the recording started.
        public let time: Duration
        /// The engine's render position (frames rendered) when it reached the session, if recorded.
        public let frame: Int?
        /// What it was.
        public let content: Content

        /// Creates an entry.
        public init(line: Int, time: Duration, frame: Int?, content: Content) {
            self.line = line
            self.time = time
            self.frame = frame
            self.content = content
        }
    }

    /// What one line holds.
    public enum Content: Sendable, Hashable {
        /// Something that reached the session.
        case input(SessionInput)
        /// Something the session emitted.
        case event(SessionEvent)
        /// The gain each stream's render side had reached, written by
        /// ``SessionRecorder/recordLevels(_:label:)``: where a replay checks its own levels.
        case levels(label: String, gains: [StreamID: Float])
    }

    /// The frames per second of the recorded session's engine.
    public let sampleRate: Int
    /// The channels of the recorded session's engine.
    public let channels: Int
    /// The recorded session's policy.
    public let policy: SessionPolicy
    /// Every line after the header, in order.
    public let entries: [Entry]

    /// The recorded inputs, in order.
    public var inputs: [Entry] { entries.filter { if case .input = $0.content { true } else { false } } }

    /// The recorded events, in order.
    public var events: [SessionEvent] {
        entries.compactMap { if case .event(let event) = $0.content { event } else { nil } }
    }

    /// Reads and checks the recording at `url`.
    ///
    /// - Throws: `SessionError` with code `fileError` if the file cannot be read, or
    ///   `invalidRecording` naming the line and what is wrong with it.
    public init(contentsOf url: URL) throws(SessionError) {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw SessionError(
                code: .fileError,
                message: "cannot read the recording \(url.path): \(error.localizedDescription); check the path")
        }
        try self.init(parsing: text)
    }

    /// Reads and checks a recording's text.
    ///
    /// - Throws: `SessionError` with code `invalidRecording` naming the line and what is wrong with it.
    public init(parsing text: String) throws(SessionError) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, !first.allSatisfy(\.isWhitespace) else {
            throw Self.invalid(
                1, "the header is missing: a recording starts with {\"format\": \"\(Self.format)\", ...}")
        }
        let decoder = JSONDecoder()
        func decode<T: Decodable>(_ type: T.Type, line: Int, _ text: Substring) throws(SessionError) -> T {
            do {
                return try decoder.decode(type, from: Data(text.utf8))
            } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
                // Not JSON at all: JSONSerialization says where it stopped making sense.
                var detail = context.underlyingError?.localizedDescription
                do {
                    _ = try JSONSerialization.jsonObject(with: Data(text.utf8))
                } catch {
                    detail = detail ?? "\(error)"
                }
                throw Self.invalid(line, "not valid JSON" + (detail.map { " (\($0))" } ?? ""))
            } catch let error as DecodingError {
                throw Self.invalid(line, Self.describe(error))
            } catch {
                throw Self.invalid(line, "\(error)")
            }
        }
        // The format and version first: a newer version's header may hold what this one cannot read.
        let preamble = try decode(RecordingFormat.Preamble.self, line: 1, first)
        guard preamble.format == Self.format else {
            throw Self.invalid(1, "format \"\(preamble.format)\" is not a session recording (\"\(Self.format)\")")
        }
        guard preamble.version <= Self.version else {
            throw Self.invalid(
                1,
                "format version \(preamble.version) is newer than this SharedSession reads (\(Self.version)): "
                    + "replay it with the SharedSession that recorded it, or a newer one")
        }
        guard preamble.version >= 1 else {
            throw Self.invalid(1, "format version \(preamble.version) does not exist: the first is 1")
        }
        let header = try decode(RecordingFormat.Header.self, line: 1, first)
        guard header.sampleRate > 0, header.channels > 0 else {
            throw Self.invalid(1, "sampleRate and channels must be positive")
        }
        var entries: [Entry] = []
        var leases = Set<LeaseID>()
        var streams = Set<StreamID>()
        for (index, text) in lines.enumerated().dropFirst() where !text.allSatisfy(\.isWhitespace) {
            let number = index + 1
            let line = try decode(RecordingFormat.Line.self, line: number, text)
            guard let time = Duration(recordedSeconds: line.t), line.t >= 0 else {
                throw Self.invalid(number, "t \(line.t) is not a time in seconds since the recording started")
            }
            if let frame = line.frame, frame < 0 { throw Self.invalid(number, "frame \(frame) is negative") }
            let content: Content
            switch (line.input, line.event, line.levels) {
            case (let input?, nil, nil):
                try Self.check(input, line: number, leases: &leases, streams: &streams)
                content = .input(input)
            case (nil, let event?, nil): content = .event(event)
            case (nil, nil, let levels?):
                var gains: [StreamID: Float] = [:]
                for level in levels.gains {
                    guard streams.contains(level.stream) else {
                        throw Self.invalid(number, "levels name \(level.stream), which the recording never opened")
                    }
                    gains[level.stream] = level.gain
                }
                content = .levels(label: levels.label, gains: gains)
            default:
                throw Self.invalid(number, "a line holds one of \"input\", \"event\" or \"levels\", and only one")
            }
            entries.append(Entry(line: number, time: time, frame: line.frame, content: content))
        }
        self.sampleRate = header.sampleRate
        self.channels = header.channels
        self.policy = header.policy
        self.entries = entries
    }

    /// Creates a recording from its parts, as ``SessionRecorder`` writes them.
    public init(sampleRate: Int, channels: Int, policy: SessionPolicy, entries: [Entry]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.policy = policy
        self.entries = entries
    }

    /// Checks that an input names only leases and streams opened before it, and notes those it opens.
    private static func check(
        _ input: SessionInput, line: Int, leases: inout Set<LeaseID>, streams: inout Set<StreamID>
    ) throws(SessionError) {
        func lease(_ id: LeaseID, _ what: String) throws(SessionError) {
            guard leases.contains(id) else {
                throw invalid(
                    line, "\(what) names \(id), which the recording never opened: the file is incomplete or was edited")
            }
        }
        func stream(_ id: StreamID, _ what: String) throws(SessionError) {
            guard streams.contains(id) else {
                throw invalid(
                    line, "\(what) names \(id), which the recording never opened: the file is incomplete or was edited")
            }
        }
        if let id = input.lease { leases.insert(id) }
        if let id = input.stream { streams.insert(id) }
        switch input.request {
        case .duck(let request):
            if case .followActivity(.stream(let followed), _) = request.style {
                try stream(followed, "a duck following a stream")
            }
            if case .followLoudness(let followed, _) = request.style {
                try stream(followed, "a duck following a stream")
            }
        case .releaseLease(let id, _): try lease(id, "releaseLease")
        case .releaseDuck(let id, _): try lease(id, "releaseDuck")
        case .closeStream(let id): try stream(id, "closeStream")
        case .setStreamVolume(let id, _): try stream(id, "setStreamVolume")
        case .ignoredRelease(_, _, .sessionLease(let id, _)), .ignoredRelease(_, _, .duckLease(let id, _)):
            try lease(id, "ignoredRelease")
        default: break
        }
    }

    static func invalid(_ line: Int, _ reason: String) -> SessionError {
        SessionError(code: .invalidRecording, message: "line \(line): \(reason)")
    }

    /// A decoding error in words: which field, where, and what was wrong.
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            let path = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "the line" : path
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field \"\(key.stringValue)\" in \(path(context))"
        case .valueNotFound(let type, let context):
            return "\(path(context)) is null, where a \(type) is needed"
        case .typeMismatch(let type, let context):
            return "\(path(context)) is not a \(type)"
        case .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
