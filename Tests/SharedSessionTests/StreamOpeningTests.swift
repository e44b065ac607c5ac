import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// A main stream opened while ducks or mutes are live starts where it will stay, and what its
/// opening changed is reported. Found by the model-based test (issue 15): an exempt main stream opened
/// under a duck started ducked and ramped up over 400 ms; a main stream opened under a voice-activity
/// duck never followed it; a background-music main stream opened while other audio mutes background
/// music started at full volume and ramped down, with no `mainGainChanged` event.
@Suite("Opening a main stream under live ducks")
struct StreamOpeningTests {
    static let full: Float = 0.5

    @Test("an exempt main stream opened while a duck is live starts at the host's volume: no ducked start, no ramp")
    func exemptMainStartsUnducked() throws {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        let events = RecordingDelegate()
        session.delegate = events
        let duck = session.duck(owner: "feed")
        let main = try session.openMainStream(
            StreamDescriptor(name: "movie", role: .movie, isExempt: true),
            source: try PCMBufferSource(samples: [Self.full, Self.full], loops: true))
        let stem = try #require(try engine.render(duration: .milliseconds(200), quantum: 1024).stems[main.id])
        #expect(stem.count == 2 * 9600)
        // The constant 0.5 at gain 1 from the first sample on (before the fix: 0.05, ramping up for 400 ms).
        #expect(stem.allSatisfy { abs($0 - Self.full) < 1e-6 }, "lowest \(stem.min() ?? .nan)")
        #expect(events.kinds.contains(.mainGainChanged(from: 0.1, to: 1)))
        #expect(session.snapshot.streams.first?.gain == 1)
        withExtendedLifetime(duck) {}
    }

    @Test("a main stream opened while a voice-activity duck is live follows it")
    func mainOpenedUnderActivityDuckFollowsIt() throws {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        var voiceSamples: [Float] = []
        for frame in 0..<(48 * 1000) {
            let value = 0.3 * Float.sinePhase(frame, frequency: 300)
            voiceSamples += [value, value]
        }
        let voice = try session.openStream(
            StreamDescriptor(name: "far end", role: .communication),
            source: try PCMBufferSource(samples: voiceSamples, loops: false), owner: "party")
        let duck = try session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(voice.id), level: nil)))
        let main = try session.openMainStream(
            source: try PCMBufferSource(samples: [Self.full, Self.full], loops: true))
        let stem = try #require(try engine.render(duration: .milliseconds(500), quantum: 1024).stems[main.id])
        #expect(stem.count == 2 * 24_000)
        // The far end speaks throughout: after the 20 ms attack the movie is at 0.5 × 0.1 (before the
        // fix it stayed at 0.5).
        let settled = stride(from: 2 * 48 * 100, to: stem.count, by: 2).map { stem[$0] }
        let worst = settled.map { abs(LevelMeter.decibels(Double($0)) - LevelMeter.decibels(0.05)) }.max() ?? .infinity
        #expect(worst < 0.1, "worst \(worst) dB from −26.02 dBFS")
        withExtendedLifetime(duck) {}
    }

    @Test("a background-music main stream opened while other audio mutes background music starts silent, reported")
    func backgroundMusicMainStartsMuted() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let events = RecordingDelegate()
        session.delegate = events
        session.handle(.otherAudioStarted)
        #expect(session.snapshot.isBackgroundMusicMuted)
        engine.removeAllCalls()
        let main = try session.openMainStream(
            StreamDescriptor(name: "music", role: .movie, isBackgroundMusic: true),
            source: try SineSource(frequency: 440, amplitude: 0.5))
        // Opened at 0, no ramp from 1 down (before the fix: opened at 1, then a 150 ms ramp to 0).
        #expect(engine.calls == [.openStream(main.id, name: "music", gain: 0, paused: false)])
        #expect(events.kinds.contains(.mainGainChanged(from: 1, to: 0)))
        #expect(session.snapshot.mainGain == 0)
    }
}
