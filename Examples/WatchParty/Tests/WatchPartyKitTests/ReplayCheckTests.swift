import Foundation
import Logging
import SharedSession
import Testing

@testable import WatchPartyKit

/// `--record` and `--replay`: a scene's run recorded, then replayed on the offline engine with the
/// same events and the same stream gains.
@Suite struct ReplayCheckTests {
    @Test func aRecordedSceneReplaysWithTheSameEventsAndLevels() throws {
        let folder = (SceneReaderTests.defaultScene as NSString).deletingLastPathComponent
        let scene = try Scene.load(path: (folder as NSString).appendingPathComponent("late-night.json"))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("watch-party-\(getpid()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try SceneRunner(
            scene: scene, engine: .offline, view: LiveView(style: .quiet), logger: Logger(label: "test"),
            recordingTo: path
        ).run()

        let report = try ReplayCheck.run(path: path)
        #expect(report.matched, "\(report.lines)")
        #expect(report.result.events.count == run.events.count)
        // A levels line before every cue and at the end, each naming every open stream.
        #expect(report.result.levels.count >= scene.cues.count)
        #expect(report.result.levels.allSatisfy { $0.matched })
        #expect(report.lines.contains { $0.hasPrefix("events: matched") })
        #expect(report.lines.contains { $0.hasPrefix("levels: matched") })

        // An edited recording is refused with its line.
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        lines[3] = #"{"t":0.1,"input":{"dropped":false,"kind":"releaseDuck","lease":99}}"#
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: SessionError.self) { try ReplayCheck.run(path: path) }
        do {
            _ = try ReplayCheck.run(path: path)
        } catch {
            #expect(error.code == .invalidRecording)
            #expect(error.message.hasPrefix("line 4: releaseDuck names lease#99"))
        }
    }
}
