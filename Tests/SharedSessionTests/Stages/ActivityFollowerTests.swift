import Testing

@testable import SharedSession

/// The voice-activity duck, alone: a meter that hears a tone in some blocks and silence in others,
/// and how far into the duck each frame of the follower is.
@Suite("The voice-activity stage")
struct ActivityFollowerTests {
    static let format = AudioFormat.standard
    static let quantum = 480

    /// One quantum of stereo at `amplitude` (a square wave: its peak is the amplitude).
    static func block(_ amplitude: Float) -> [Float] {
        (0..<quantum * 2).map { $0 % 4 < 2 ? amplitude : -amplitude }
    }

    /// Measures one quantum on `meter`, then moves the follower over it; returns the mix at its end.
    static func quantum(
        _ follower: ActivityFollower, _ meter: ActivityMeter, amplitude: Float
    ) -> Float {
        let samples = block(amplitude)
        samples.withUnsafeBufferPointer { meter.measure($0.baseAddress!, frames: quantum, channels: 2) }
        _ = follower.pickUp()
        var duck = follower.duck
        if follower.readSpans() {
            for frame in 0..<quantum { duck.advance(active: follower.isActive(at: frame)) }
        }
        follower.duck = duck
        return duck.mix
    }

    @Test("speech takes the stream into the duck over the attack; silence past the hold brings it out over the release")
    func attackAndRelease() {
        let meter = ActivityMeter(format: Self.format)
        meter.configure(threshold: 0.01, holdFrames: 960)
        let follower = ActivityFollower()
        follower.set(
            gain: 0.1, following: [meter], attack: .milliseconds(20), release: .milliseconds(400), format: Self.format)
        #expect(follower.isFollowing)
        // 20 ms attack = 960 frames: two quanta of speech.
        #expect(abs(Self.quantum(follower, meter, amplitude: 0.5) - 0.5) < 1e-3)
        // Float steps: in within a frame of the attack's length.
        #expect(Self.quantum(follower, meter, amplitude: 0.5) > 1 - 1e-5)
        #expect(follower.duck.ducked == 0.1)
        // The hold (960 frames) keeps it in through two quanta of silence.
        #expect(Self.quantum(follower, meter, amplitude: 0) == 1)
        #expect(Self.quantum(follower, meter, amplitude: 0) == 1)
        // Then out over 400 ms = 19 200 frames: 1/40 of the way per quantum.
        let out = Self.quantum(follower, meter, amplitude: 0)
        #expect(abs(out - (1 - 1 / 40)) < 1e-3)
    }

    @Test("a meter that stopped measuring says nothing: its last span is not read twice")
    func staleMeter() {
        let meter = ActivityMeter(format: Self.format)
        meter.configure(threshold: 0.01, holdFrames: 0)
        let follower = ActivityFollower()
        follower.set(
            gain: 0.1, following: [meter], attack: .milliseconds(10), release: .milliseconds(10), format: Self.format)
        #expect(Self.quantum(follower, meter, amplitude: 0.5) > 1 - 1e-5)
        // No measure this quantum: the follower reads the same block again and hears nothing.
        var duck = follower.duck
        _ = follower.readSpans()
        for frame in 0..<Self.quantum { duck.advance(active: follower.isActive(at: frame)) }
        #expect(duck.mix == 0)
    }

    @Test("a new ducked gain during speech is reached over the attack down, never stepped")
    func duckedGainMoves() {
        let meter = ActivityMeter(format: Self.format)
        meter.configure(threshold: 0.01, holdFrames: 48_000)
        let follower = ActivityFollower()
        follower.set(
            gain: 0.5, following: [meter], attack: .milliseconds(20), release: .milliseconds(400), format: Self.format)
        _ = Self.quantum(follower, meter, amplitude: 0.5)
        _ = Self.quantum(follower, meter, amplitude: 0.5)
        #expect(follower.duck.ducked == 0.5)
        follower.set(
            gain: 0.1, following: [meter], attack: .milliseconds(20), release: .milliseconds(400), format: Self.format)
        _ = Self.quantum(follower, meter, amplitude: 0.5)
        #expect(abs(follower.duck.ducked - 0.3) < 1e-3, "half of the 0.4 in one of the attack's two quanta")
        _ = Self.quantum(follower, meter, amplitude: 0.5)
        #expect(abs(follower.duck.ducked - 0.1) < 1e-5)
    }

    @Test("no meters: nothing followed, and the stream comes out of a duck it was in")
    func unfollowed() {
        let meter = ActivityMeter(format: Self.format)
        meter.configure(threshold: 0.01, holdFrames: 0)
        let follower = ActivityFollower()
        follower.set(
            gain: 0.1, following: [meter], attack: .milliseconds(10), release: .milliseconds(20), format: Self.format)
        _ = Self.quantum(follower, meter, amplitude: 0.5)
        follower.set(
            gain: 0.1, following: [], attack: .milliseconds(10), release: .milliseconds(20), format: Self.format)
        #expect(!follower.isFollowing)
        #expect(abs(Self.quantum(follower, meter, amplitude: 0.5) - 0.5) < 1e-3, "out over the release, speech or not")
        #expect(Self.quantum(follower, meter, amplitude: 0.5) < 1e-5)
    }
}
