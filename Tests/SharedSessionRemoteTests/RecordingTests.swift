import Foundation
import SharedSession
import SharedSessionRecording
import SharedSessionRemote
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension RemoteTests {
    /// The wire is the recording's coding and a remote unit's requests take the session's own road:
    /// a recording of a host with a unit in another process replays like any other.
    @Suite("A recording of a host with a remote unit")
    struct RecordingTests {
        @Test("a session with a remote unit that joins, ducks and is killed replays with no mismatch")
        func replays() throws {
            let url = URL(fileURLWithPath: "/tmp/ss-remote-\(getpid())-recording.jsonl")
            defer { try? FileManager.default.removeItem(at: url) }
            let engine = OfflineEngine()
            let session = SharedSession(engine: engine)
            let recorder = try SessionRecorder(session: session, to: url)
            let events = RecordingDelegate()
            session.delegate = events
            _ = try session.openMainStream(source: try PCMBufferSource(samples: [0.5, 0.5], loops: true))
            session.mainVolume = 0.8
            let server = try SessionServer(session: session, path: socketPath("recording"))
            defer { server.close() }
            let unit = try UnitProcess(["--socket", server.path, "--owner", "watch-party"])
            #expect(try unit.line().hasPrefix("ok welcome"))
            #expect(try unit.ask("acquire voice").hasSuffix(" voice"))
            #expect(try unit.ask("duck").hasPrefix("ok lease"))
            _ = try engine.render(duration: .milliseconds(300))
            unit.kill()
            // The event the replay is checked for, not a state that comes before it: the unit's duck goes
            // first, its session lease next, and `unitReleased` last (waiting for the duck alone stopped
            // the recording before it, 2 runs in 14 with every offline suite in one process).
            try waitUntil("the killed unit's unitReleased") {
                events.kinds.contains { if case .unitReleased = $0 { true } else { false } }
            }
            _ = try engine.render(duration: .milliseconds(600))
            try recorder.stop()

            let recording = try SessionRecording(contentsOf: url)
            let result = try SessionReplayer(recording).run()
            #expect(result.mismatches.isEmpty, "\(result.mismatches)")
            let kinds = result.events.map { "\($0.kind)".prefix { $0 != "(" } }
            #expect(kinds.contains("unitReleased") && kinds.contains("duckAcquired"))
        }
    }
}
