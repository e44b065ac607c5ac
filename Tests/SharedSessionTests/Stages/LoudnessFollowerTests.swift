import Foundation
import Testing

@testable import SharedSession

/// The loudness duck, alone: a voice meter that heard a second of speech, a movie source fed to the
/// follower, and the ceiling it moves the movie to. The voice and the movie are the same 1 kHz tone,
/// so their loudness differs by exactly their level difference, whatever the K-weighting does to it.
@Suite("The loudness stage")
struct LoudnessFollowerTests {
    static let format = AudioFormat.standard
    static let quantum = 480

    /// A quantum of a 1 kHz stereo sine at `amplitude`, from `frame` on.
    static func tone(_ amplitude: Float, from frame: Int) -> [Float] {
        (0..<quantum).flatMap { index -> [Float] in
            let value = amplitude * Float(sin(2 * Double.pi * 1000 * Double(frame + index) / 48_000))
            return [value, value]
        }
    }

    /// A meter that measured `seconds` of speech at `amplitude`.
    static func voice(_ amplitude: Float, seconds: Int) -> ActivityMeter {
        let meter = ActivityMeter(format: format)
        meter.configure(threshold: 0.01, holdFrames: 4800)
        meter.measureLoudness()
        for block in 0..<(seconds * 100) {
            tone(amplitude, from: block * quantum).withUnsafeBufferPointer {
                meter.measure($0.baseAddress!, frames: quantum, channels: 2)
            }
        }
        return meter
    }

    /// Runs the follower over `quanta` quanta of the movie at `amplitude` while the voice is heard;
    /// returns the ceiling's factor at the end.
    static func follow(
        _ follower: LoudnessFollower, voice: ActivityMeter, movie amplitude: Float, quanta: Int
    ) -> Float {
        let pointer = UInt(bitPattern: Unmanaged.passUnretained(voice).toOpaque())
        for block in 0..<quanta {
            follower.begin()
            tone(amplitude, from: block * quantum).withUnsafeBufferPointer {
                follower.measure(
                    $0.baseAddress!, frames: quantum, channels: 2, meters: (pointer, 0, 0, 0), heard: true, gain: 1)
            }
            follower.move(frames: quantum, heard: true, voiced: true)
        }
        return follower.factorTo
    }

    /// A follower of one voice at `margin` LU over the movie, no deeper than `deepest` dB, picked up as
    /// a loudness duck starts (the attack 20 ms, the release 400 ms).
    static func follower(margin: Float, deepest: Float) -> LoudnessFollower {
        let follower = LoudnessFollower(format: format)
        follower.set(
            LoudnessFollowing(slots: [LoudnessSlot(margin: margin, deepest: deepest)], policy: .default),
            meterCount: 1, frameRate: 48_000)
        follower.pickUp(hasMeters: true, heard: false, attackFrames: 960, releaseFrames: 19_200)
        return follower
    }

    static func decibels(_ gain: Float) -> Float { 20 * log10(gain) }

    @Test("the movie is held the margin under a voice as loud as it: 10 dB down, reached over the start's 150 ms")
    func holdsTheMargin() throws {
        let voice = Self.voice(0.25, seconds: 1)
        #expect(voice.speechBlocks > 0)
        let follower = Self.follower(margin: 10, deepest: -30)
        #expect(follower.isActive)
        // The first 100 ms step asks; the start's 150 ms then reaches the level.
        let early = Self.follow(follower, voice: voice, movie: 0.25, quanta: 15)
        #expect(Self.decibels(early) > -10 + 0.5, "not there before the start's 150 ms: \(Self.decibels(early)) dB")
        // Reached at 250 ms (the first step's 100 ms and the start's 150 ms), not only by 550 ms: measured
        // -9.9994 dB then.
        let reached = Self.follow(follower, voice: voice, movie: 0.25, quanta: 10)
        print("[measure] loudness stage: \(Self.decibels(reached)) dB at 250 ms")
        #expect(abs(Self.decibels(reached) - -10) < 0.1, "\(Self.decibels(reached)) dB at 250 ms")
        let held = Self.follow(follower, voice: voice, movie: 0.25, quanta: 30)
        #expect(abs(Self.decibels(held) - -10) < 0.1, "\(Self.decibels(held)) dB")
    }

    @Test("a movie 6 dB louder than the voice goes 16 dB down; the deepest bound caps a far louder one")
    func followsTheMovie() throws {
        let voice = Self.voice(0.125, seconds: 1)
        let follower = Self.follower(margin: 10, deepest: -20)
        let louder = Self.follow(follower, voice: voice, movie: 0.25, quanta: 60)
        #expect(abs(Self.decibels(louder) - -16) < 0.2, "\(Self.decibels(louder)) dB")
        let capped = Self.follow(follower, voice: voice, movie: 1, quanta: 400)
        #expect(abs(Self.decibels(capped) - -20) < 0.1, "the deepest bound: \(Self.decibels(capped)) dB")
    }

    /// Runs the voice at `amplitude` and the follower over the movie at 0.25 together for `quanta`
    /// quanta; returns the ceiling's factor in dB after each.
    static func converse(
        _ follower: LoudnessFollower, voice: ActivityMeter, amplitude: Float, quanta: Int, from start: Int
    ) -> [Float] {
        (0..<quanta).map { block in
            tone(amplitude, from: (start + block) * quantum).withUnsafeBufferPointer {
                voice.measure($0.baseAddress!, frames: quantum, channels: 2)
            }
            return decibels(follow(follower, voice: voice, movie: 0.25, quanta: 1))
        }
    }

    @Test("a speaker 4 LU quieter than the one before is followed within 2.5 s; a louder one up slowly")
    func quieterSpeaker() throws {
        let quieter = 0.25 * Float(pow(10, -4.0 / 20))
        let voice = Self.voice(0.25, seconds: 10)
        let follower = Self.follower(margin: 10, deepest: -30)
        let first = Self.converse(follower, voice: voice, amplitude: 0.25, quanta: 100, from: 1000)
        #expect(abs(first.last! - -10) < 0.1, "\(first.last!) dB")
        // The quieter speaker: the movie 14 dB down from 2.5 s into their speech, while the 10 s figure
        // still reads the louder one.
        let second = Self.converse(follower, voice: voice, amplitude: quieter, quanta: 250, from: 1100)
        let long = try #require(voice.speechLoudness)
        let recent = try #require(voice.recentSpeechLoudness)
        print("[measure] loudness stage, quieter speaker: \(second.last!) dB at 2.5 s; 10 s \(long), 2 s \(recent)")
        #expect(long - recent > 2, "the 10 s figure \(long), the last 2 s \(recent) LUFS")
        #expect(abs(second.last! - -14) < 0.6, "\(second.last!) dB 2.5 s into the quieter speaker")
        // The louder one again: the movie rises by at most 0.5 dB within 2 s.
        let third = Self.converse(follower, voice: voice, amplitude: 0.25, quanta: 400, from: 1350)
        let worst = (0..<third.count).map { index in third[index] - (third[max(0, index - 200)...index].min()!) }
        #expect(worst.max()! <= 0.6, "the movie rose \(worst.max()!) dB within 2 s")
    }

    @Test("a movie that steps up 8 dB under steady speech is followed down at the policy's rate, not the drift's")
    func movieStepsUp() throws {
        let voice = Self.voice(0.25, seconds: 10)
        let follower = Self.follower(margin: 10, deepest: -30)
        // The movie as loud as the voice for 5 s, its window full: 10 dB down.
        let settled = Self.follow(follower, voice: voice, movie: 0.25, quanta: 500)
        #expect(abs(Self.decibels(settled) - -10) < 0.1, "\(Self.decibels(settled)) dB")
        // 8 dB louder: the level asked deepens as the 3 s window takes the step in. Measured -17.88 dB
        // at 3 s and at 4 s; followed at the drift's 0.4 dB/s once within 2.5 dB (the step not told
        // from a drift), -16.58 and -16.98.
        let louder = 0.25 * Float(pow(10, 8.0 / 20))
        let after = (0..<400).map { _ in Self.decibels(Self.follow(follower, voice: voice, movie: louder, quanta: 1)) }
        print("[measure] loudness stage, movie 8 dB up: \(after[299]) dB at 3 s, \(after[399]) dB at 4 s")
        #expect(abs(after[399] - -18) < 0.3, "\(after[399]) dB 4 s after the movie stepped up 8 dB")
    }

    @Test("no slot set: the stage is not engaged and leaves the stream alone")
    func unset() {
        let follower = LoudnessFollower(format: Self.format)
        follower.set(.none, meterCount: 1, frameRate: 48_000)
        follower.pickUp(hasMeters: true, heard: false, attackFrames: 960, releaseFrames: 19_200)
        #expect(!follower.isActive)
        #expect(!follower.isEngaged)
        #expect(follower.reading == nil)
    }
}
