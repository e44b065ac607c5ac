import ArgumentParser
import Foundation
import SharedSession

/// `watch-party --replay FILE`: replays a recorded session on the offline engine and says whether its
/// events and the main stream's levels matched the recording.
enum ReplayReport {
    static func run(path: String, quiet: Bool) throws {
        let result: ReplayResult
        let recording: SessionRecording
        do {
            recording = try SessionRecording(contentsOf: URL(fileURLWithPath: path))
            result = try SessionReplayer(recording).run()
        } catch {
            FileHandle.standardError.write(Data("watch-party: \(error.message)\n".utf8))
            throw ExitCode(2)
        }
        let inputs = recording.inputs.count
        let seconds = Double(result.rendered.frames) / Double(recording.sampleRate)
        print(String(format: "replayed %@: %d inputs, %.3f s on the offline engine", path, inputs, seconds))
        if !quiet {
            for event in result.events.prefix(10_000) { print("  \(event)") }
        }
        let eventsMatched =
            result.mismatches.allSatisfy { $0.recorded?.hasPrefix("event") != true }
            && result.events.count == result.recordedEvents.count
        print(
            eventsMatched
                ? "events: matched, \(result.events.count) of \(result.recordedEvents.count) in the same order"
                : "events: DIFFERENT from the recording")
        if result.levels.isEmpty {
            print("levels: the recording holds none (recorded on PipeWire, or by an older run)")
        } else {
            let worst = result.levels.compactMap { $0.difference.map(abs) }.max() ?? .infinity
            let matched = result.levels.filter(\.matched).count
            print(
                String(
                    format: "levels: %@, %d of %d gains within 0.1 dB (largest difference %.4f dB)",
                    matched == result.levels.count ? "matched" : "DIFFERENT", matched, result.levels.count,
                    Double(worst)))
        }
        for mismatch in result.mismatches.prefix(20) {
            print("  mismatch: \(mismatch)")
        }
        if !result.matched {
            FileHandle.standardError.write(
                Data("watch-party: the replay differs from the recording in \(result.mismatches.count) place(s)\n".utf8)
            )
            throw ExitCode.failure
        }
    }
}
