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
    // The default voice-activity timings, as promised (literals: never read from the policy).
    static let attackMilliseconds = 20
    static let holdMilliseconds = 1200
    static let releaseMilliseconds = 400

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
        let stem = try scene.engine.render(duration: .milliseconds(4000), quantum: 1024).stem(scene.main.id)

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
        // The attack is the steepest change anywhere: no step larger than it allows.
        #expect(try meter.largestStep(stem) <= (Self.full - Self.ducked) / Float(Self.frame(20)) * 1.001)
        // The release, measured across its boundary: from 100 ms before the hold ends to after the
        // main is back. The last syllable ends at 1150 ms; the hold keeps it down to 2350, then the
        // release brings it back by 2750, with no step steeper than its own ramp.
        let lastSyllable = 1150
        let releaseStart = lastSyllable + Self.holdMilliseconds
        let releaseEnd = releaseStart + Self.releaseMilliseconds
        let around = Self.frame(releaseStart - 100)..<Self.frame(releaseEnd + 100)
        let releaseStep = (Self.full - Self.ducked) / Float(Self.frame(Self.releaseMilliseconds))
        #expect(try meter.largestStep(stem, frames: around) <= releaseStep * 1.01)
        let leaves = try #require(try meter.firstFrame(stem, atOrAbove: Self.ducked * 1.001, frames: around))
        let back = try #require(try meter.firstFrame(stem, atOrAbove: Self.full * 0.9999, frames: around))
        print(
            "voice-activity release offline: leaves the ducked level \(leaves) (hold end \(Self.frame(releaseStart))),"
                + " back at \(back) (release end \(Self.frame(releaseEnd)))")
        // Within 0.5 ms: the release adds a step per frame, so it ends a few frames off its length.
        #expect(abs(leaves - Self.frame(releaseStart)) <= 2, "the hold ends 1200 ms after the last syllable")
        #expect(abs(back - Self.frame(releaseEnd)) <= 24, "the release takes 400 ms")
        duck.release()
    }

    @Test("silence never ducks")
    func silenceNeverDucks() throws {
        let scene = try Self.scene(voice: Self.bursts([(2000, 0)]))
        let duck = try scene.session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(scene.voice.id), level: nil)))
        let stem = try scene.engine.render(duration: .milliseconds(2000)).stem(scene.main.id)
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
        let stem = try scene.engine.render(duration: .milliseconds(10_000), quantum: 1024).stem(scene.main.id)
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
        var stem = try scene.engine.render(duration: .milliseconds(1400)).stem(scene.main.id)
        Self.expectLevel(stem, 300, 500, Self.full * 0.8 * 0.5, "the static duck alone in silence")
        Self.expectLevel(stem, 600, 1400, Self.full * 0.8 * 0.1, "the voice duck wins while it is lower")
        let deep = try scene.session.duck(owner: "notifications", level: 0.05)
        stem = try scene.engine.render(duration: .milliseconds(1000)).stem(scene.main.id)
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
        let stem = try engine.render(duration: .milliseconds(3000)).stem(main.id)
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
        // The audio before the release and after it, joined: the release point itself is measured.
        var stem = try scene.engine.render(duration: .milliseconds(500)).stem(scene.main.id)
        #expect(abs(stem.last! - Self.ducked) < 1e-5)
        duck.release()
        stem += try scene.engine.render(duration: .milliseconds(1000)).stem(scene.main.id)
        Self.expectLevel(stem, 950, 1500, Self.full, "restored")
        let releaseEnd = 500 + Self.releaseMilliseconds
        let around = Self.frame(400)..<Self.frame(1500)
        #expect(
            try meter.largestStep(stem, frames: around)
                <= (Self.full - Self.ducked) / Float(Self.frame(Self.releaseMilliseconds)) * 1.01)
        Self.expectLevel(stem, 400, 500, Self.ducked, "ducked up to the release")
        let back = try #require(try meter.firstFrame(stem, atOrAbove: Self.full * 0.9999, frames: around))
        #expect(abs(back - Self.frame(releaseEnd)) <= 24, "back over the 400 ms release, from the release call")
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
        var stem = try scene.engine.render(duration: .milliseconds(300)).stem(scene.main.id)
        try scene.session.setMainVolume(0.4)
        stem += try scene.engine.render(duration: .milliseconds(700)).stem(scene.main.id)
        Self.expectLevel(stem, 800, 1000, Self.full * 0.4 * 0.1, "ducked under the new volume")
        // The steepest allowed: the ducked level's change over the 20 ms attack.
        #expect(try meter.largestStep(stem) <= (Self.full - Self.ducked) / Float(Self.frame(20)) * 1.001)
        duck.release()
    }
}
