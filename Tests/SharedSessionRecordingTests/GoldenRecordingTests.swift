import Foundation
import SharedSession
import SharedSessionRecording
import SharedSessionTesting
import Testing

/// The recording format, pinned: `Fixtures/golden.jsonl` is what ``GoldenScenario`` recorded, byte
/// for byte. A change to how any input, event or value is written fails ``recordingMatchesTheFixture()``,
/// so a change of format is a decision someone makes, not an accident.
///
/// To change the format deliberately: make the change (and raise `SessionRecording.version` if an
/// older SharedSession could no longer read the new files, or this one the old), then write the
/// fixture again with
///
///     SHAREDSESSION_WRITE_GOLDEN=1 swift test --filter GoldenRecordingTests
///
/// and commit the new `golden.jsonl` with the change, saying in the CHANGELOG what changed in the format.
@Suite("The recording format, pinned by a golden file")
struct GoldenRecordingTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appending(path: "Fixtures/golden.jsonl")

    /// The header's wall-clock time is the one thing a recording cannot make deterministic: it is
    /// compared as this.
    static func normalized(_ text: String) -> String {
        text.replacing(#/"recordedAt":"[^"]*"/#, with: #""recordedAt":"2026-01-01T00:00:00Z""#)
    }

    @Test("recording the golden scenario writes exactly the checked-in file")
    func recordingMatchesTheFixture() throws {
        let recorded = Self.normalized(try GoldenScenario.record())
        if ProcessInfo.processInfo.environment["SHAREDSESSION_WRITE_GOLDEN"] == "1" {
            try recorded.write(to: Self.fixture, atomically: true, encoding: .utf8)
        }
        let expected = Self.normalized(try String(contentsOf: Self.fixture, encoding: .utf8))
        let recordedLines = recorded.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        // The first line that differs, so a failure says what changed.
        if let line = zip(recordedLines, expectedLines).enumerated().first(where: { $0.element.0 != $0.element.1 })?
            .offset
        {
            Issue.record(
                """
                line \(line + 1) differs from \(Self.fixture.lastPathComponent):
                fixture:  \(expectedLines[line])
                recorded: \(recordedLines[line])
                """)
        }
        #expect(recordedLines.count == expectedLines.count)
        #expect(recorded == expected)
    }

    @Test("replaying the golden file reproduces every event and level it holds")
    func fixtureReplaysWithoutMismatches() throws {
        let recording = try SessionRecording(contentsOf: Self.fixture)
        let result = try SessionReplayer(recording).run()
        #expect(result.mismatches.isEmpty, "\(result.mismatches.prefix(5))")
        #expect(Set(result.levels.map(\.line)).count == 4)
        #expect(result.levels.allSatisfy { $0.matched })
        #expect(result.events.count == recording.events.count)
    }

    @Test("the golden file holds every kind of input and many kinds of event")
    func fixtureCoversEveryInput() throws {
        let recording = try SessionRecording(contentsOf: Self.fixture)
        let inputs = Set(
            recording.inputs.compactMap { if case .input(let input) = $0.content { input } else { nil } }.map(Self.kind)
        )
        #expect(inputs == Self.everyInputKind, "missing: \(Self.everyInputKind.subtracting(inputs).sorted())")
        let events = Set(recording.events.map { "\($0.kind)".prefix { $0 != "(" } })
        #expect(events.count >= 25, "\(events.sorted())")
    }

    static let everyInputKind: Set<String> = [
        "acquire", "releaseLease", "duck", "releaseDuck", "expireDeadlines", "setMainVolume", "play", "pause",
        "suspend", "wakeFromSuspend", "system", "engine", "openStream", "openStreamRefused", "closeStream",
        "setStreamVolume", "ignoredRelease", "rejected", "activationOutcome", "captureOutcome", "unitReleased",
        "close",
    ]

    /// The case of `input`: a new case does not compile here until the scenario records it.
    static func kind(_ input: SessionInput) -> String {
        switch input.request {
        case .acquire: "acquire"
        case .releaseLease: "releaseLease"
        case .duck: "duck"
        case .releaseDuck: "releaseDuck"
        case .expireDeadlines: "expireDeadlines"
        case .setMainVolume: "setMainVolume"
        case .play: "play"
        case .pause: "pause"
        case .suspend: "suspend"
        case .wakeFromSuspend: "wakeFromSuspend"
        case .system: "system"
        case .engine: "engine"
        case .openStream: "openStream"
        case .openStreamRefused: "openStreamRefused"
        case .closeStream: "closeStream"
        case .setStreamVolume: "setStreamVolume"
        case .ignoredRelease: "ignoredRelease"
        case .rejected: "rejected"
        case .activationOutcome: "activationOutcome"
        case .captureOutcome: "captureOutcome"
        case .unitReleased: "unitReleased"
        case .close: "close"
        }
    }
}

/// A session's life in 2.1 seconds on the offline engine, every step at a fixed time and frame:
/// the host, three SDK units and a bridge, the platform's events and the engine's, refusals of
/// every kind. Its clock is set by hand (as a replay's is), so the recording's times and instants
/// are the same in every run.
enum GoldenScenario {
    static let policy = {
        try! SessionPolicy(unitLimits: [
            "feed": try! UnitLimits(deepestDuckLevel: 0.25),
            "strict": try! UnitLimits(mayPauseMain: false, excess: .refuse),
            "sdk": try! UnitLimits(maximumHold: .milliseconds(60)),
        ])
    }()

    /// Plays the scenario and returns the recording's text.
    static func record() throws -> String {
        let engine = RefusingEngine()
        let offline = engine.offline
        let start = ContinuousClock.now
        let time = ManualTime(start)
        var elapsed = Duration.zero
        let session = SharedSession(engine: engine, policy: policy, logger: nil, clock: .manual(time))
        let url = FileManager.default.temporaryDirectory.appending(path: "golden-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let recorder = try SessionRecorder(session: session, to: url, framePosition: { offline.framesRendered })
        /// Renders `milliseconds` of audio and moves the clock on by as much.
        func advance(_ milliseconds: Int = 100) throws {
            _ = try offline.render(duration: .milliseconds(milliseconds), quantum: 1024)
            elapsed += .milliseconds(milliseconds)
            time.set(start + elapsed)
        }
        func levels(_ label: String) {
            var gains: [StreamID: Float] = [:]
            for id in offline.openStreams { gains[id] = offline.currentGain(of: id) }
            recorder.recordLevels(gains, label: label)
        }

        // The host's movie plays; a feed clip comes with its lease; a voice chat is refused once by
        // the device and once by the microphone, then joins.
        let main = try session.openMainStream(source: try SineSource(frequency: 1000, amplitude: 0.5))
        session.play()
        try advance()
        let generic = try session.acquire(.generic, owner: "feed")
        try advance()
        engine.refuseActivations(1)
        _ = try? session.acquire(.voice, owner: "chat")
        try advance()
        engine.refuseCaptures(1)
        _ = try? session.acquire(.voice, owner: "chat")
        try advance()
        let voice = try session.acquire(.voice, owner: "chat")
        try advance()
        levels("voice joined")

        // Ducks stacked, one raised to its unit's limit; the host's volume, and a value it may not set.
        let chatDuck = session.duck(owner: "chat")
        let feedDuck = try session.duck(owner: "feed", level: 0.05)
        try advance()
        try session.setMainVolume(0.5)
        _ = try? session.setMainVolume(2)
        try advance()
        levels("ducked at half volume")
        chatDuck.release()
        try advance()

        // A pause, one its unit's limits refuse, a duck past its maximum hold released by the
        // deadline, and a duck and a lease let go of without release().
        let pause = session.pauseMain(owner: "feed")
        try advance()
        pause.release()
        session.pauseMain(owner: "strict").release()
        let held = session.duck(owner: "sdk")
        try advance()
        _ = session.submitRecorded(SessionInput(.expireDeadlines))
        held.release()
        do { _ = session.duck(owner: "feed") }
        do { _ = try session.acquire(.generic, owner: "dropper") }
        try advance()

        // The platform: an interruption, a route change, other audio, the background and a suspend.
        session.handle(.interruptionBegan)
        try advance()
        session.handle(.interruptionEnded(shouldResume: true))
        session.handle(
            .routeChanged(
                RouteChange(reason: .oldDeviceUnavailable, previousOutput: "headphones", currentOutput: "speaker")))
        try advance()
        session.handle(.otherAudioStarted)
        try advance()
        session.handle(.otherAudioStopped)
        session.handle(.didEnterBackground)
        session.suspend(renderAnyway: true)
        try advance()
        session.wakeFromSuspend()
        session.handle(.willEnterForeground)
        try advance()

        // The engine's own reports.
        offline.post(.externalVolumeChange(stream: main.id, volume: 0.9))
        offline.post(.quantumChanged(frames: 2048))
        offline.post(.connectionLost(reason: "the sound server went away"))
        offline.post(.reconnected(attempts: 2, downtime: .milliseconds(350)))
        try advance()

        // An overlay stream with its own volume and a fault, one the engine refuses, and a bridge's
        // unbalanced call and teardown.
        let farEnd = try session.openStream(
            StreamDescriptor(name: "far end", role: .communication),
            source: try SineSource(frequency: 300, amplitude: 0.3), owner: "chat")
        try farEnd.setVolume(0.8)
        offline.post(.streamFault(stream: farEnd.id, reason: "xrun"))
        try advance()
        levels("far end playing")
        farEnd.close()
        engine.refuseOpens(1)
        _ = try? session.openStream(
            StreamDescriptor(name: "notification", role: .notification, target: "speaker"),
            source: try SineSource(frequency: 880, amplitude: 0.2))
        let bridge = OverlayAudioBridge(session: session, owner: "watch-party")
        bridge.requestAudioDucking()
        bridge.disableAudioDucking()
        bridge.disableAudioDucking()
        bridge.requestAudioDucking()
        bridge.tearDown(reason: "the watch party ended")
        try advance()

        // Everything given back, one release twice; the movie pauses and the session closes.
        feedDuck.release()
        voice.release()
        generic.release()
        generic.release()
        try advance()
        levels("everything released")
        session.pause()
        try advance()
        session.close()
        try recorder.stop()
        return try String(contentsOf: url, encoding: .utf8)
    }
}
