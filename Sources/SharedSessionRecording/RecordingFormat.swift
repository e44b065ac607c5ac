import Foundation
import SharedSession

/// The lines of a recording file, written (by ``SessionRecorder``) and read (by ``SessionRecording``)
/// here only: the header, then one line per input, event or levels. Each line's keys are listed
/// once, in its `CodingKeys`; the values inside are written by their own forms (SharedSessionCoding's
/// `InputCoding.swift`, `EventCoding.swift`, `ValueCoding.swift`).
///
/// The header and the lines are put together by hand rather than by `JSONEncoder`, so that the
/// format, version and time come first in every line, where a person reading the file looks.
enum RecordingFormat {
    /// The encoder of every value in a recording: sorted keys, instants as seconds from `origin`.
    static func encoder(origin: ContinuousClock.Instant) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.userInfo[.sessionRecordingOrigin] = RecordingTimeOrigin(origin)
        return encoder
    }

    /// The encoder of the form replays compare events in: sorted keys, no instants.
    static func normalizingEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.userInfo[.sessionRecordingOmitsInstants] = true
        return encoder
    }

    /// The header, `{"format", "version", "sampleRate", "channels", "recordedAt", "policy"}`.
    struct Header: Codable {
        let format: String
        let version: Int
        let sampleRate: Int
        let channels: Int
        let recordedAt: String?
        let policy: SessionPolicy

        /// The header's line, its fields in the order above.
        func text(_ encoder: JSONEncoder) throws -> String {
            RecordingFormat.object([
                (CodingKeys.format, try json(format, encoder)), (.version, "\(version)"),
                (.sampleRate, "\(sampleRate)"), (.channels, "\(channels)"),
                (.recordedAt, try recordedAt.map { try json($0, encoder) }), (.policy, try json(policy, encoder)),
            ])
        }
    }

    /// The header's first two fields, read before the rest: a newer version's header may hold what
    /// this one cannot read.
    struct Preamble: Decodable {
        let format: String
        let version: Int
    }

    /// A line after the header: `{"t": seconds, "frame": frames, <content>}`, the content one of
    /// `"input"`, `"event"` and `"levels"`.
    struct Line: Decodable {
        let t: Double
        let frame: Int?
        let input: SessionInput?
        let event: SessionEvent?
        let levels: Levels?

        /// The line of `content` at `time` since the recording started, at `frame` if known.
        static func text(time: Duration, frame: Int?, _ content: Content, _ encoder: JSONEncoder) throws -> String {
            let body: (CodingKeys, String) =
                switch content {
                case .input(let input): (.input, try json(input, encoder))
                case .event(let event): (.event, try json(event, encoder))
                case .levels(let levels): (.levels, try json(levels, encoder))
                }
            // The time as Swift prints a Double ("0.0", "1.25"), as the first recordings were written.
            return RecordingFormat.object([(.t, "\(time.recordedSeconds)"), (.frame, frame.map { "\($0)" }), body])
        }

        /// What a line holds.
        enum Content: Sendable {
            case input(SessionInput)
            case event(SessionEvent)
            case levels(Levels)
        }
    }

    /// `{"label": ..., "gains": [{"stream": id, "gain": g}]}`.
    struct Levels: Codable, Sendable {
        struct Gain: Codable, Sendable {
            let stream: StreamID
            let gain: Float
        }

        let label: String
        let gains: [Gain]
    }

    /// A JSON object of `fields` (each value's JSON text) in the order given; `nil` values are left out.
    private static func object<Key: CodingKey>(_ fields: [(Key, String?)]) -> String {
        "{" + fields.compactMap { key, json in json.map { #""\#(key.stringValue)":\#($0)"# } }.joined(separator: ",")
            + "}"
    }
}

/// `value`'s JSON text.
private func json(_ value: some Encodable, _ encoder: JSONEncoder) throws -> String {
    String(decoding: try encoder.encode(value), as: UTF8.self)
}
