import CRealtimeProbe
import Foundation
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// Voice-activity ducking measured in what the offline engine rendered: the main stream is a constant
/// 0.5, so its stem is its gain envelope sample by sample, and the followed voice is speech-like bursts
/// of a tone.
@Suite("Voice-activity ducking")
struct VoiceActivityTests {
    static let rate = 48
    static let full: Float = 0.5
    static let ducked: Float = 0.05

    /// Stereo frames: `segments` of (milliseconds, amplitude of a 300 Hz tone; 0 for silence).
    static func bursts(_ segments: [(Int, Float)]) -> [Float] {
        var samples: [Float] = []
        var frame = 0
        for (milliseconds, amplitude) in segments {
            for _ in 0..<(milliseconds * rate) {
                let value = amplitude * Float.sinePhase(frame, frequency: 300)
                samples.append(value)
                samples.append(value)
                frame += 1
            }
        }
        return samples
    }

    struct Scene {
        let engine: OfflineEngine
        let session: SharedSession
        let main: StreamHandle
        let voice: StreamHandle
    }

    static func scene(voice samples: [Float], policy: SessionPolicy = .default) throws -> Scene {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine, policy: policy)
        let main = try session.openMainStream(source: try PCMBufferSource(samples: [full, full], loops: true))
        let voice = try session.openStream(
            StreamDescriptor(name: "far end", role: .communication),
            source: try PCMBufferSource(samples: samples, loops: false),
            owner: "party")
        return Scene(engine: engine, session: session, main: main, voice: voice)
    }

    static func frame(_ milliseconds: Int) -> Int { milliseconds * rate }

    /// Checks every frame of `stem` in `from..<to` milliseconds is within 0.1 dB of `level`.
    static func expectLevel(_ stem: [Float], _ from: Int, _ to: Int, _ level: Float, _ comment: Comment) {
        let frames = stride(from: frame(from) * 2, to: frame(to) * 2, by: 2).map { stem[$0] }
        let worst =
            frames.map { abs(LevelMeter.decibels(Double($0)) - LevelMeter.decibels(Double(level))) }.max() ?? .infinity
        #expect(worst < 0.1, comment)
    }

    @Test("speech ducks the main within the attack of its first sample; gaps shorter than the hold keep it down")
    func burstsShapeTheMain() throws {
        // 200 ms silence, speech 400, gap 150 (< hold), speech 400, gap 2000 (> hold 1.2 s + release 0.4 s),
        // speech 250.
        let samples = Self.bursts([(200, 0), (400, 0.3), (150, 0), (400, 0.3), (2000, 0), (250, 0.3), (600, 0)])
        let scene = try Self.scene(voice: samples)
        let duck = try scene.session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(scene.voice.id), level: nil)))
        let stem = try scene.engine.render(duration: .milliseconds(4000), quantum: 1024).stems[scene.main.id] ?? []

        Self.expectLevel(stem, 0, 200, Self.full, "before any speech: untouched")
        let onset = try #require(
            stride(from: Self.frame(200) * 2, to: stem.count, by: 2).first { stem[$0] <= Self.ducked * 1.0001 })
        let onsetMilliseconds = Double(onset / 2 - Self.frame(200)) / Double(Self.rate)
        print("voice-activity onset offline: ducked \(onsetMilliseconds) ms after the first syllable (attack 20 ms)")
        #expect(onsetMilliseconds <= 20.05)
        #expect(stem[Self.frame(200) * 2 + 2] < Self.full, "the duck starts at the syllable's first samples")
        Self.expectLevel(stem, 221, 1150, Self.ducked, "held down through the 150 ms gap")
        Self.expectLevel(stem, 1151, 2349, Self.ducked, "held for the hold time after the last syllable")
        Self.expectLevel(stem, 2760, 3150, Self.full, "back up after hold + release in the long gap")
        Self.expectLevel(stem, 3171, 3400, Self.ducked, "down again with the next sentence")
        // The release is the policy's 400 ms ramp: no step larger than it allows.
        #expect(meter.largestStep(stem) <= (Self.full - Self.ducked) / Float(Self.frame(20)) * 1.001)
        duck.release()
    }

    @Test("silence never ducks")
    func silenceNeverDucks() throws {
        let scene = try Self.scene(voice: Self.bursts([(2000, 0)]))
        let duck = try scene.session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(scene.voice.id), level: nil)))
        let stem = try scene.engine.render(duration: .milliseconds(2000)).stems[scene.main.id] ?? []
        #expect(stem.allSatisfy { $0 == Self.full })
        duck.release()
    }

    @Test("noise below the threshold never ducks: no false duck in 10 s of −42 dBFS noise")
    func quietNoiseNeverDucks() throws {
        var random = SeededNoise(seed: 7)
        var samples: [Float] = []
        for _ in 0..<(10_000 * Self.rate) {
            let value = random.next() * 0.008  // peak −41.9 dBFS, under the −40 dBFS threshold
            samples += [value, value]
        }
        let scene = try Self.scene(voice: samples)
        let duck = try scene.session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(scene.voice.id), level: nil)))
        let stem = try scene.engine.render(duration: .milliseconds(10_000), quantum: 1024).stems[scene.main.id] ?? []
        let ducked = stride(from: 0, to: stem.count, by: 2).count { stem[$0] < Self.full }
        print("voice-activity false ducks on -42 dBFS noise: \(ducked) of \(stem.count / 2) frames")
        #expect(ducked == 0)
        duck.release()
    }

    @Test("the host's volume and other ducks combine with it as any duck: the lowest level wins")
    func combinesWithOtherDucks() throws {
        let samples = Self.bursts([(500, 0), (1000, 0.3), (1500, 0)])
        let scene = try Self.scene(voice: samples)
        try scene.session.setMainVolume(0.8)
        let shallow = try scene.session.duck(owner: "feed", level: 0.5)
        let voiceDuck = try scene.session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(scene.voice.id), level: 0.1)))
        var stem = try scene.engine.render(duration: .milliseconds(1400)).stems[scene.main.id] ?? []
        Self.expectLevel(stem, 300, 500, Self.full * 0.8 * 0.5, "the static duck alone in silence")
        Self.expectLevel(stem, 600, 1400, Self.full * 0.8 * 0.1, "the voice duck wins while it is lower")
        let deep = try scene.session.duck(owner: "notifications", level: 0.05)
        stem = try scene.engine.render(duration: .milliseconds(1000)).stems[scene.main.id] ?? []
        Self.expectLevel(stem, 200, 1000, Self.full * 0.8 * 0.05, "a deeper static duck wins over the voice duck")
        deep.release()
        voiceDuck.release()
        shallow.release()
    }

    @Test("a duck that follows the microphone ducks while the local user speaks")
    func followsTheMicrophone() throws {
        let microphone = try PCMBufferSource(samples: Self.bursts([(300, 0), (500, 0.3), (2200, 0)]), loops: false)
        let engine = OfflineEngine(input: microphone)
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(
            source: try PCMBufferSource(samples: [Self.full, Self.full], loops: true))
        let voice = try session.acquire(.voice, owner: "party")
        let duck = try session.duck(DuckRequest(owner: "party", style: .followActivity(.voiceInput, level: nil)))
        let stem = try engine.render(duration: .milliseconds(3000)).stems[main.id] ?? []
        Self.expectLevel(stem, 0, 300, Self.full, "before the user speaks")
        Self.expectLevel(stem, 321, 1999, Self.ducked, "while the user speaks, and the hold after")
        Self.expectLevel(stem, 2410, 3000, Self.full, "after the hold and the release")
        duck.release()
        voice.release()
    }

    @Test("releasing the voice-activity duck mid-sentence brings the main back over the release ramp")
    func releaseMidSentence() throws {
        let scene = try Self.scene(voice: Self.bursts([(2000, 0.3)]))
        let duck = try scene.session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(scene.voice.id), level: nil)))
        var stem = try scene.engine.render(duration: .milliseconds(500)).stems[scene.main.id] ?? []
        #expect(abs(stem.last! - Self.ducked) < 1e-5)
        duck.release()
        stem = try scene.engine.render(duration: .milliseconds(1000)).stems[scene.main.id] ?? []
        Self.expectLevel(stem, 450, 1000, Self.full, "restored")
        #expect(meter.largestStep(stem) <= (Self.full - Self.ducked) / Float(Self.frame(400)) * 1.01)
    }

    @Test("following a stream that is not open is refused with unknownStream")
    func followingUnknownStream() throws {
        let session = SharedSession(engine: RecordingEngine())
        let error = #expect(throws: SessionError.self) {
            try session.duck(
                DuckRequest(owner: "party", style: .followActivity(.stream(StreamID(rawValue: 9)), level: nil)))
        }
        #expect(error?.code == .unknownStream)
        #expect(session.snapshot.ducks.isEmpty)
    }
}

extension VoiceActivityTests {
    @Test("the host's volume changed while someone speaks: the ducked level follows without a click")
    func volumeChangeDuringSpeech() throws {
        let scene = try Self.scene(voice: Self.bursts([(3000, 0.3)]))
        let duck = try scene.session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(scene.voice.id), level: nil)))
        var stem = try scene.engine.render(duration: .milliseconds(300)).stems[scene.main.id] ?? []
        try scene.session.setMainVolume(0.4)
        stem += try scene.engine.render(duration: .milliseconds(700)).stems[scene.main.id] ?? []
        Self.expectLevel(stem, 800, 1000, Self.full * 0.4 * 0.1, "ducked under the new volume")
        // The steepest allowed: the ducked level's change over the 20 ms attack.
        #expect(meter.largestStep(stem) <= (Self.full - Self.ducked) / Float(Self.frame(20)) * 1.001)
        duck.release()
    }
}
