import Foundation
import SharedSession
import SharedSessionRecording
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// A session run on the offline engine while a recorder writes it to a file: the main stream's stem
/// and the frames at which its level is compared with the replay's.
final class RecordedRun {
    let engine = RefusingEngine()
    let session: SharedSession
    let recorder: SessionRecorder
    let events = RecordingDelegate()
    let url: URL
    let main: StreamHandle
    private(set) var mainStem: [Float] = []
    /// Frames at the end of each rendered stretch, where every ramp has settled.
    private(set) var marks: [Int] = []

    static func mainSource() -> SineSource { try! SineSource(frequency: 1000, amplitude: 0.5) }

    init(policy: SessionPolicy = .default) throws {
        url = FileManager.default.temporaryDirectory.appending(path: "session-\(UUID().uuidString).jsonl")
        session = SharedSession(engine: engine, policy: policy)
        session.delegate = events
        let offline = engine.offline
        recorder = try SessionRecorder(session: session, to: url, framePosition: { offline.framesRendered })
        main = try session.openMainStream(source: Self.mainSource())
    }

    /// Renders `milliseconds` in quanta of 1024 frames and marks the end.
    func render(_ milliseconds: Int = 600) throws {
        let rendered = try engine.offline.render(duration: .milliseconds(milliseconds), quantum: 1024)
        mainStem += try rendered.stem(main)
        marks.append(engine.offline.framesRendered)
        if let gain = engine.offline.currentGain(of: main.id) {
            recorder.recordLevels([main.id: gain], label: "mark \(marks.count)")
        }
    }

    func finish() throws -> SessionRecording {
        try recorder.stop()
        return try SessionRecording(contentsOf: url)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// The main stream's level in dB (relative to the source's full level) over the 10 ms before
/// `frame`: 480 frames, ten whole periods of the 1 kHz sine.
func level(_ stem: [Float], before frame: Int, fullScale: Float) throws -> Float {
    Float(max(-90, try meter.rms(stem, frames: (frame - 480)..<frame) - LevelMeter.decibels(Double(fullScale))))
}

@Suite("Sessions that can be replayed")
struct ReplayTests {
    static let policy = {
        try! SessionPolicy(unitLimits: [
            "feed": try! UnitLimits(deepestDuckLevel: 0.25),
            "strict": try! UnitLimits(mayPauseMain: false, excess: .refuse),
            "sdk": try! UnitLimits(maximumHold: .milliseconds(60)),
        ])
    }()

    /// Waits up to three seconds for the `duckExpired` event of `owner`'s duck in `log`, on the
    /// calling thread. Not an `await`: a continuation resumed by a busy pool came back when the core
    /// pass's other tests were done (277 s in, in CI), so a session recorded by the wall clock ran
    /// that long, and its replay rendered all of it (11 min of the core pass, 16 of the sanitizer's).
    static func expiry(of owner: String, in log: EventLog<SessionEvent>) -> SessionEvent? {
        let deadline = ContinuousClock.now + .seconds(3)
        repeat {
            let expiry = log.first { event in
                if case .duckExpired(let duck) = event.kind { duck.owner == owner } else { false }
            }
            if let expiry { return expiry }
            Thread.sleep(forTimeInterval: 0.001)
        } while ContinuousClock.now < deadline
        return nil
    }

    /// Everything issue 9 names, one after the other, with audio rendered between the calls.
    static func recordEverything() async throws -> (RecordedRun, SessionRecording) {
        let run = try RecordedRun(policy: policy)
        let session = run.session
        session.play()
        try run.render()
        let generic = try session.acquire(.generic, owner: "feed")
        try run.render()
        // The engine refuses the voice configuration once: the lease is refused, the session stays generic.
        run.engine.refuseActivations(1)
        #expect(throws: SessionError.self) { try session.acquire(.voice, owner: "chat") }
        try run.render()
        let voice = try session.acquire(.voice, owner: "chat")
        try run.render()
        // Ducks stacked: the lowest level wins; the feed's is raised to its limit (a limitApplied event).
        let chatDuck = session.duck(owner: "chat")
        let feedDuck = try session.duck(owner: "feed", level: 0.05)
        try run.render()
        try session.setMainVolume(0.5)
        try run.render()
        chatDuck.release()
        try run.render()
        // A pause request, and one a unit's limits refuse (its lease comes back already released).
        let pause = session.pauseMain(owner: "feed")
        try run.render()
        pause.release()
        try run.render()
        let refused = session.pauseMain(owner: "strict")
        refused.release()
        // An interruption, begun and ended by the platform.
        session.handle(.interruptionBegan)
        try run.render()
        session.handle(.interruptionEnded(shouldResume: true))
        try run.render()
        // A duck held past its unit's maximum hold: released by the deadline; the later release is harmless.
        let held = session.duck(owner: "sdk")
        try run.render(30)
        #expect(expiry(of: "sdk", in: run.events.log) != nil, "no duckExpired within 3 s")
        #expect(!session.snapshot.ducks.contains { $0.owner == "sdk" })
        try run.render()
        held.release()
        // An overlay stream with its own volume, an engine report, and a bad value the host passed.
        let farEnd = try session.openStream(
            StreamDescriptor(name: "far end", role: .communication),
            source: try SineSource(frequency: 300, amplitude: 0.3),
            owner: "chat")
        try farEnd.setVolume(0.8)
        try run.render()
        run.engine.offline.post(.system(.otherAudioStarted))
        #expect(throws: SessionError.self) { try session.setMainVolume(2) }
        farEnd.close()
        try run.render()
        feedDuck.release()
        voice.release()
        try run.render()
        generic.release()
        generic.release()
        try run.render()
        session.close()
        return (run, try run.finish())
    }

    @Test("a replay of a recorded session gives the same events in the same order and the same levels")
    func replayReproducesEvents() async throws {
        let (run, recording) = try await Self.recordEverything()
        // What the recorder wrote is what the session emitted.
        #expect(recording.events.map(ReplayResult.normalized) == run.events.events.map(ReplayResult.normalized))
        let kinds = recording.events.map(\.kind)
        #expect(kinds.contains { if case .activationFailed = $0 { true } else { false } })
        #expect(kinds.contains { if case .configurationChanged = $0 { true } else { false } })
        #expect(kinds.contains(.limitApplied(owner: "feed", limit: .deepestDuckLevel(0.25))))
        #expect(kinds.contains { if case .duckExpired(let info) = $0 { info.owner == "sdk" } else { false } })
        #expect(
            kinds.contains { if case .requestRejected(let error) = $0 { error.code == .limitExceeded } else { false } })
        #expect(kinds.contains(.interruptionBegan))

        let result = try SessionReplayer(recording).run()
        #expect(result.mismatches.isEmpty, "\(result.mismatches.prefix(5))")
        #expect(result.events.map(ReplayResult.normalized) == run.events.events.map(ReplayResult.normalized))
        #expect(result.rendered.frames == run.engine.offline.framesRendered)
        // The render side's gain at every mark, as recorded and as replayed.
        #expect(result.levels.count == run.marks.count)
        #expect(result.levels.allSatisfy { $0.matched })
        // The stand-in is a constant 1: its stem is the gain; the recorded sine's level is measured.
        var worst: Float = 0
        for mark in run.marks {
            let recorded = try level(run.mainStem, before: mark, fullScale: 0.5 / Float(2).squareRoot())
            let replayed = try level(result.rendered.stem(result.mainStreams[0]), before: mark, fullScale: 1)
            worst = max(worst, abs(recorded - replayed))
            // Measured: 0.0004 dB at most (the recorded sine's RMS over 10 ms against the stand-in's gain).
            #expect(
                abs(recorded - replayed) < 0.001, "at frame \(mark): recorded \(recorded) dB, replayed \(replayed) dB")
        }
        print(
            "[measure] replay: recorded and replayed main levels at \(run.marks.count) marks differ by \(worst) dB at most"
        )
        // The levels the marks saw: full, ducked (0.1), 0.5 × 0.1, 0.5 × 0.25, paused, full again.
        let replayedLevels = run.marks.map { result.mainLevel(atFrame: $0 - 1)! }
        #expect(replayedLevels.contains { abs($0 - 0.05) < 1e-4 })
        #expect(replayedLevels.contains { abs($0 - 0.125) < 1e-4 })
        #expect(replayedLevels.contains(0))
    }

    @Test("a replay with the recorded audio renders the main stream sample for sample")
    func replayWithRealSources() async throws {
        let (run, recording) = try await Self.recordEverything()
        var replayer = SessionReplayer(recording)
        replayer.source = { descriptor in
            descriptor.role == .movie
                ? RecordedRun.mainSource() : try! SineSource(frequency: 300, amplitude: 0.3)
        }
        let result = try replayer.run()
        #expect(result.matched)
        let replayed = try result.rendered.stem(result.mainStreams[0])
        #expect(replayed.count == run.mainStem.count)
        let largest = zip(replayed, run.mainStem).map { abs($0 - $1) }.max() ?? 1
        #expect(largest < 1e-6)
    }

    @Test("the bug report: the volume stays low after the call, and the replay shows who holds the duck")
    func volumeStaysLowAfterTheCall() throws {
        // The host's side: a voice SDK joins a call, ducks the movie, and leaves the call without
        // releasing its duck. The host records the session and attaches the file to the report.
        let run = try RecordedRun()
        let session = run.session
        let bridge = OverlayAudioBridge(session: session, owner: "VoiceSDK")
        session.play()
        try run.render(1000)
        try bridge.prepareAudioSession(for: .voice)
        bridge.requestAudioDucking()
        try run.render(3000)
        bridge.disableAudioSession(for: .voice)  // The call ends; the duck is forgotten.
        try run.render(2000)
        let recording = try run.finish()

        // The SDK author's side: replay the attached file in a test.
        let result = try SessionReplayer(recording).run()
        #expect(result.matched)
        let end = result.rendered.frames - 1
        #expect(abs(LevelMeter.decibels(Double(result.mainLevel(atFrame: end)!)) - LevelMeter.decibels(0.1)) < 0.1)
        // Who is ducking the movie: the ducks acquired and never given back.
        var live: [LeaseID: String] = [:]
        for event in result.events {
            switch event.kind {
            case .duckAcquired(let info): live[info.id] = info.owner
            case .duckReleased(let info), .duckDropped(let info), .duckExpired(let info): live[info.id] = nil
            default: break
            }
        }
        #expect(Array(live.values) == ["VoiceSDK"])
        withExtendedLifetime(bridge) {}
    }

    @Test("a session recorded without frame positions replays at its recorded times")
    func wallClockRecording() throws {
        // A session whose engine renders on its own (as PipeWire does): the recorder knows only times.
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine, policy: Self.policy)
        let url = FileManager.default.temporaryDirectory.appending(path: "wall-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let recorder = try SessionRecorder(session: session, to: url)
        let events = RecordingDelegate()
        session.delegate = events
        let main = try session.openMainStream(source: try SineSource(frequency: 1000, amplitude: 0.5))
        session.play()
        let lease = try session.acquire(.generic, owner: "feed")
        // Held (a `_ =` would drop it at once), so its unit's 60 ms maximum hold is what releases it.
        let held = session.duck(owner: "sdk")
        #expect(Self.expiry(of: "sdk", in: events.log) != nil, "no duckExpired within 3 s")
        #expect(session.snapshot.ducks.isEmpty)
        held.release()
        lease.release()
        main.close()
        try recorder.stop()
        let recording = try SessionRecording(contentsOf: url)
        #expect(recording.inputs.allSatisfy { $0.frame == nil })
        let result = try SessionReplayer(recording).run()
        #expect(result.mismatches.isEmpty, "\(result.mismatches.prefix(5))")
        #expect(result.events.map(ReplayResult.normalized) == events.events.map(ReplayResult.normalized))
        // Frames rendered up to the last input's time: at least the 60 ms hold.
        let last = recording.inputs.last!.time
        // The session lasted the hold and the wait for its expiry, not as long as a busy pool.
        #expect(last < .seconds(4), "the recorded session lasted \(last)")
        #expect(result.rendered.frames == AudioFormat.standard.frames(in: last))
        #expect(result.rendered.frames >= 2880)
    }

    @Test("a replay that diverges from its recording reports where")
    func divergenceIsReported() throws {
        let run = try RecordedRun()
        let duck = run.session.duck(owner: "chat")
        try run.render(300)
        duck.release()
        try run.render(300)
        let recording = try run.finish()
        // Edit the recording's policy: the replay ducks to another level than the recorded events say.
        let edited = SessionRecording(
            sampleRate: recording.sampleRate, channels: recording.channels,
            policy: try SessionPolicy(duckLevel: 0.3), entries: recording.entries)
        let result = try SessionReplayer(edited).run()
        #expect(!result.matched)
        #expect(result.mismatches.contains { $0.recorded?.contains("mainGainChanged") == true })
        // The first mark was taken while the duck was live: 0.1 recorded, 0.3 replayed.
        #expect(result.levels.first?.matched == false)
        #expect(abs((result.levels.first?.difference ?? 0) - 9.54) < 0.01)
    }

    @Test("a replayed level 1 dB off the recorded one is a mismatch; 0.05 dB off is within the 0.1 dB promise")
    func levelToleranceIsATenthOfADecibel() throws {
        let run = try RecordedRun()
        let duck = run.session.duck(owner: "chat")
        try run.render(300)
        duck.release()
        try run.render(300)
        let recording = try run.finish()
        func firstLevel(decibelsOff offset: Double) throws -> LevelComparison {
            let level = Float(0.1 * LevelMeter.amplitude(decibels: offset))
            let edited = SessionRecording(
                sampleRate: recording.sampleRate, channels: recording.channels,
                policy: try SessionPolicy(duckLevel: level), entries: recording.entries)
            return try #require(try SessionReplayer(edited).run().levels.first)
        }
        let oneDecibel = try firstLevel(decibelsOff: 1)
        #expect(abs((oneDecibel.difference ?? 0) - 1) < 0.01)
        #expect(!oneDecibel.matched, "a level 1 dB off must not pass the replay")
        let twentieth = try firstLevel(decibelsOff: 0.05)
        #expect(abs((twentieth.difference ?? 0) - 0.05) < 0.01)
        #expect(twentieth.matched)
    }
}
