import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// What a listener hears with the default policy, pinned to literal numbers: each timing and level is
/// measured in the audio the offline engine rendered and compared with the number the README and the
/// docs promise, never with `SessionPolicy.default` (a changed default must fail here, not move the
/// expectation with it). The main stream plays a constant 0.5, so its stem is its gain envelope
/// sample by sample. Every release is measured across its boundary: the audio before the release and
/// after it are joined, and the join itself is checked.
@Suite("Default timings and levels, as heard")
struct DefaultTimingTests {
    // MARK: the promised numbers: each literal lives here once

    /// A duck's level: −20 dB (the StreamLayer sample's 0.1).
    static let duckDecibels = -20.0
    /// A duck fades down over 150 ms.
    static let duckFadeMilliseconds = 150
    /// A restore fades up over 400 ms.
    static let restoreFadeMilliseconds = 400
    /// A voice-activity duck goes down over 20 ms once speech starts.
    static let activityAttackMilliseconds = 20
    /// A voice-activity duck stays down 1.2 s after the last active sample (chosen from pauses in speech).
    static let activityHoldMilliseconds = 1200
    /// A voice-activity duck comes back over 400 ms after the hold.
    static let activityReleaseMilliseconds = 400
    /// A pause fades out, and a resume fades in, over 5 ms: no click, and no audible fade.
    static let declickFrames = 240

    static let full: Float = 0.5
    static var ducked: Float { full * Float(LevelMeter.amplitude(decibels: duckDecibels)) }
    static func frames(_ milliseconds: Int) -> Int { milliseconds * 48 }

    /// The left channel of an interleaved stereo stem.
    static func left(_ stem: [Float]) -> [Float] { stride(from: 0, to: stem.count, by: 2).map { stem[$0] } }

    /// Checks that `envelope` holds `from` before `start`, ramps linearly to `to` over exactly `length`
    /// frames from `start` (the first frame of the ramp already moved: the kernel's ramp reaches its
    /// target on its last frame), then holds `to` up to `end`.
    static func expectRamp(
        _ envelope: [Float], from: Float, to: Float, start: Int, length: Int, end: Int, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let tolerance: Float = 2e-4
        let before = envelope[..<start].map { abs($0 - from) }.max() ?? 0
        #expect(before <= tolerance, "\(what): level before the ramp", sourceLocation: sourceLocation)
        var worst: Float = 0
        for index in 0..<length {
            let expected = from + (to - from) * Float(index + 1) / Float(length)
            worst = max(worst, abs(envelope[start + index] - expected))
        }
        #expect(
            worst <= tolerance, "\(what): a straight line of \(length) frames, off by \(worst)",
            sourceLocation: sourceLocation)
        #expect(
            abs(envelope[start + length / 2 - 1] - (from + to) / 2) <= tolerance,
            "\(what): halfway at half the ramp", sourceLocation: sourceLocation)
        // Not there 1 ms early (the voice-activity ramps add a step per frame, so they may end a few
        // frames off; a ramp of another length is off by far more).
        #expect(
            abs(envelope[start + length - 1 - 48] - to) > abs(to - from) / Float(length) * 24,
            "\(what): not there 1 ms early", sourceLocation: sourceLocation)
        let after = envelope[(start + length)..<end].map { abs($0 - to) }.max() ?? 0
        #expect(after <= tolerance, "\(what): level after the ramp", sourceLocation: sourceLocation)
        // No click: no step larger than the ramp's own, the join between two render calls included.
        let steepest = zip(envelope.dropFirst(), envelope).map { abs($0 - $1) }.max() ?? 0
        #expect(
            steepest <= abs(to - from) / Float(length) * 1.01, "\(what): no step steeper than the ramp",
            sourceLocation: sourceLocation)
    }

    @Test("a duck goes down 20 dB over 150 ms; its release comes back over 400 ms, measured across the release")
    func duckAndRestore() throws {
        let scene = try OfflineScene(signal: .constant)
        var stem = try scene.engine.render(duration: .milliseconds(200), quantum: 480).stem(scene.main)
        let duck = scene.session.duck(owner: "feed")
        stem += try scene.engine.render(duration: .milliseconds(600), quantum: 480).stem(scene.main)
        duck.release()
        stem += try scene.engine.render(duration: .milliseconds(700), quantum: 480).stem(scene.main)
        let envelope = Self.left(stem)
        #expect(envelope.count == Self.frames(1500))

        let duckStart = Self.frames(200)
        let duckLength = Self.frames(Self.duckFadeMilliseconds)
        Self.expectRamp(
            Array(envelope[..<Self.frames(800)]), from: Self.full, to: Self.ducked, start: duckStart,
            length: duckLength, end: Self.frames(800), "duck")
        let level = try meter.rms(stem, frames: Self.frames(700)..<Self.frames(800))
        #expect(abs(level - (fullLevel(of: Self.full) + Self.duckDecibels)) <= 0.1, "ducked level, dB")

        // The release, with the 200 ms before it: the join between the two render calls is inside.
        let restoreStart = Self.frames(800)
        let restoreLength = Self.frames(Self.restoreFadeMilliseconds)
        let around = Array(envelope[Self.frames(600)...])
        Self.expectRamp(
            around, from: Self.ducked, to: Self.full, start: restoreStart - Self.frames(600), length: restoreLength,
            end: around.count, "restore")
        #expect(try meter.rms(stem, lastMilliseconds: 100) == fullLevel(of: Self.full), "back at the host's volume")
    }

    @Test("a voice-activity duck: down 20 dB over 20 ms at the first loud sample, held 1.2 s, back over 400 ms")
    func voiceActivityAttackHoldRelease() throws {
        // The far end: silence, 400 ms of a constant 0.3 (every frame above −40 dBFS), then silence.
        let speechStart = Self.frames(200)
        let speechEnd = Self.frames(600)
        var voice = [Float](repeating: 0, count: Self.frames(2600) * 2)
        for index in (speechStart * 2)..<(speechEnd * 2) { voice[index] = 0.3 }
        let scene = try OfflineScene(signal: .constant)
        let farEnd = try scene.session.openStream(
            StreamDescriptor(name: "far end", role: .communication), source: try PCMBufferSource(samples: voice),
            owner: "party")
        let duck = try scene.session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(farEnd.id), level: nil)))
        let stem = try scene.engine.render(duration: .milliseconds(2600), quantum: 1024).stem(scene.main)
        let envelope = Self.left(stem)

        // Attack: from the first loud frame, over the attack; then down until the hold ends.
        let holdEnd = speechEnd + Self.frames(Self.activityHoldMilliseconds)
        Self.expectRamp(
            Array(envelope[..<holdEnd]), from: Self.full, to: Self.ducked, start: speechStart,
            length: Self.frames(Self.activityAttackMilliseconds), end: holdEnd, "voice-activity attack")
        // Hold and release, across the end of speech: the last loud frame, the hold, then the release.
        let releaseLength = Self.frames(Self.activityReleaseMilliseconds)
        let around = Array(envelope[Self.frames(500)...])
        Self.expectRamp(
            around, from: Self.ducked, to: Self.full, start: holdEnd - Self.frames(500), length: releaseLength,
            end: around.count, "voice-activity hold and release")
        let level = try meter.rms(stem, frames: (speechEnd - Self.frames(100))..<speechEnd)
        #expect(abs(level - (fullLevel(of: Self.full) + Self.duckDecibels)) <= 0.1, "ducked level while speaking, dB")
        duck.release()
    }

    @Test("a mute goes down over 150 ms and the unmute comes back over 400 ms, measured across the unmute")
    func muteAndUnmute() throws {
        let scene = try OfflineScene(signal: .constant)
        var stem = try scene.engine.render(duration: .milliseconds(100), quantum: 480).stem(scene.main)
        try scene.session.setMainVolume(0)
        stem += try scene.engine.render(duration: .milliseconds(300), quantum: 480).stem(scene.main)
        try scene.session.setMainVolume(1)
        stem += try scene.engine.render(duration: .milliseconds(500), quantum: 480).stem(scene.main)
        let envelope = Self.left(stem)
        Self.expectRamp(
            Array(envelope[..<Self.frames(400)]), from: Self.full, to: 0, start: Self.frames(100),
            length: Self.frames(Self.duckFadeMilliseconds), end: Self.frames(400), "volume down")
        let around = Array(envelope[Self.frames(300)...])
        Self.expectRamp(
            around, from: 0, to: Self.full, start: Self.frames(100), length: Self.frames(Self.restoreFadeMilliseconds),
            end: around.count, "volume up")
    }
}

extension DefaultTimingTests {
    @Test("a pause fades out over 5 ms and the resume fades in over 5 ms, measured across both calls")
    func pauseAndResumeDeclick() throws {
        let scene = try OfflineScene(signal: .constant)
        var stem = try scene.engine.render(duration: .milliseconds(100), quantum: 480).stem(scene.main)
        scene.session.pause()
        stem += try scene.engine.render(duration: .milliseconds(100), quantum: 480).stem(scene.main)
        scene.session.play()
        stem += try scene.engine.render(duration: .milliseconds(100), quantum: 480).stem(scene.main)
        let envelope = Self.left(stem)
        Self.expectRamp(
            Array(envelope[..<Self.frames(200)]), from: Self.full, to: 0, start: Self.frames(100),
            length: Self.declickFrames, end: Self.frames(200), "pause")
        let around = Array(envelope[Self.frames(150)...])
        Self.expectRamp(
            around, from: 0, to: Self.full, start: Self.frames(50), length: Self.declickFrames, end: around.count,
            "resume")
        #expect(try meter.isSilent(stem, frames: (Self.frames(100) + Self.declickFrames)..<Self.frames(200)))
    }
}

/// The RMS level in dBFS of a constant `amplitude`.
func fullLevel(of amplitude: Float) -> Double { LevelMeter.decibels(Double(amplitude)) }
