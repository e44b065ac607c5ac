// Every use the example makes of the session-recording types (`SessionRecorder`, `SessionRecording`,
// `SessionReplayer`, in the SharedSessionRecording product) is in this file: `--record` (RunRecorder)
// and `--replay` (ReplayCheck).
import Foundation
public import SharedSession
public import SharedSessionRecording

/// `watch-party --record FILE`: the session's inputs and events written to a file while the scene plays,
/// and, offline, the gain each stream has reached before every cue, where a replay checks its levels.
final class RunRecorder {
    private let recorder: SessionRecorder
    private let offline: OfflineEngine?

    /// Starts recording `session` to `path`. On the offline engine (`offline`) each input carries its
    /// frame, so a replay renders the same audio.
    ///
    /// - Throws: `SessionError` with code `fileError` when the file cannot be written.
    init(session: SharedSession, path: String, offline: OfflineEngine?) throws(SessionError) {
        var position: (@Sendable () -> Int)?
        if let offline { position = { offline.framesRendered } }
        recorder = try SessionRecorder(session: session, to: URL(fileURLWithPath: path), framePosition: position)
        self.offline = offline
    }

    /// Records the gain the render side of each of `streams` has reached, under `label`. Only offline:
    /// on PipeWire the gains are applied on the daemon's cycle, where a replay cannot compare them.
    func recordLevels(of streams: some Sequence<StreamID>, label: String) {
        guard let offline else { return }
        var gains: [StreamID: Float] = [:]
        for id in streams {
            if let gain = offline.currentGain(of: id) { gains[id] = gain }
        }
        recorder.recordLevels(gains, label: label)
    }

    /// Stops recording and closes the file.
    func stop() throws(SessionError) {
        try recorder.stop()
    }
}

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
