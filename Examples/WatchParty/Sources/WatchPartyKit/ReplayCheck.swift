import Foundation
public import SharedSession
public import SharedSessionRecording

/// `watch-party --replay FILE`: replays a recorded session on the offline engine and says whether its
/// events and its streams' levels matched the recording.
public enum ReplayCheck {
    /// What the replay found: the lines to print, and whether everything matched.
    public struct Report: Sendable {
        /// The lines to print, in order.
        public let lines: [String]
        /// Whether the replay's events and levels matched the recording.
        public let matched: Bool
        /// The replay itself.
        public let result: ReplayResult
    }

    /// Reads the recording at `path` and replays it.
    ///
    /// - Throws: `SessionError` with code `fileError` or `invalidRecording` (naming the line) when the
    ///   file cannot be read or is refused.
    public static func run(path: String) throws(SessionError) -> Report {
        let recording = try SessionRecording(contentsOf: URL(fileURLWithPath: path))
        let result = try SessionReplayer(recording).run()
        var lines: [String] = []
        let seconds = Double(result.rendered.frames) / Double(recording.sampleRate)
        lines.append(
            String(
                format: "replayed %@: %d inputs, %.3f s on the offline engine", path, recording.inputs.count, seconds))
        let eventsMatched =
            result.events.count == result.recordedEvents.count
            && !result.mismatches.contains { $0.recorded?.hasPrefix("event") == true }
        lines.append(
            eventsMatched
                ? "events: matched, \(result.events.count) of \(result.recordedEvents.count) in the same order"
                : "events: DIFFERENT from the recording")
        if result.levels.isEmpty {
            lines.append("levels: the recording holds none (it was recorded on PipeWire)")
        } else {
            let matched = result.levels.filter(\.matched).count
            let largest = result.levels.compactMap { $0.difference.map(abs) }.max() ?? .infinity
            lines.append(
                String(
                    format: "levels: %@, %d of %d stream gains within 0.1 dB (largest difference %.4f dB)",
                    matched == result.levels.count ? "matched" : "DIFFERENT", matched, result.levels.count,
                    Double(largest)))
        }
        for mismatch in result.mismatches.prefix(20) { lines.append("  mismatch: \(mismatch)") }
        if result.mismatches.count > 20 { lines.append("  … \(result.mismatches.count - 20) more") }
        return Report(lines: lines, matched: result.matched, result: result)
    }
}
