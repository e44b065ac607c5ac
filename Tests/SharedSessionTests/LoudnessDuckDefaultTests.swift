import Foundation
import SharedSession
import SharedSessionTesting
import Testing

/// The loudness duck's documented defaults (`LoudnessDuckPolicy.default`), pinned as literals, and the
/// default deepest bound heard: a quiet voice over a loud movie asks for more depth than the bound
/// allows, and the movie's level in the rendered stem, measured by FFmpeg's `ebur128`, stops at it.
@Suite("Loudness duck defaults")
struct LoudnessDuckDefaultTests {
    @Test(
        "the default policy is the documented one: 10 LU, 0 to −30 dB, short-term, down 20 dB/s, up 6 dB/s, 0.5 LU"
    )
    func documentedDefaults() throws {
        let policy = LoudnessDuckPolicy.default
        #expect(policy.margin == 10)
        #expect(policy.deepest == -30)
        #expect(policy.shallowest == 0)
        #expect(policy.window == .shortTerm)
        #expect(policy.deepeningRate == 20)
        #expect(policy.lighteningRate == 6)
        #expect(policy.tolerance == 0.5)
        // The defaults of the initializer and of a session's policy are the same values.
        #expect(try LoudnessDuckPolicy() == policy)
        #expect(try SessionPolicy().loudnessDuck == policy)
    }

    @Test("a quiet voice under a loud movie asks for 40 dB: the default duck holds the movie 30 dB down, not deeper")
    func drivenToTheDefaultBound() throws {
        let rate = LoudnessDuckTests.rate
        let seconds = 12
        // The far end at −40 LUFS (the material's −23, 17 dB down) over a steady movie at −10 LUFS: the
        // default margin asks for −40 − 10 − (−10) = −40 dB, below the −30 dB bound.
        let (_, speech) = try LoudnessDuckTests.material.get()
        let voice = speech.prefix(seconds * rate * 2).map { $0 * Float(pow(10, -17.0 / 20)) }
        let movie = try LoudnessDuckTests.scaled(
            LoudnessDuckTests.movieNoise(seconds: seconds, swell: 0, seed: 4242), to: -10)
        let rendered = try LoudnessDuckTests.render(movie: movie, voice: Array(voice))
        // From 6 s on: the voice's loudness known, the depth moved 30 dB at 20 dB/s, the window past
        // the start.
        let settled = (6 * rate)..<(seconds * rate)
        let movieLevel = try LoudnessDuckTests.ffmpegLoudness(movie, frames: settled)
        let voiceLevel = try LoudnessDuckTests.ffmpegLoudness(rendered.voice, frames: settled)
        let heard = try LoudnessDuckTests.ffmpegLoudness(rendered.main, frames: settled)
        print(
            "[measure] loudness duck at its default bound: movie \(movieLevel) LUFS, voice \(voiceLevel) LUFS, the "
                + "movie heard at \(heard) LUFS: \(heard - movieLevel) dB"
        )
        // The margin asks for at least 5 dB more than the bound gives, so a deeper bound shows.
        #expect(voiceLevel - 10 - movieLevel < -35, "the material asks for less than the bound")
        #expect(abs(heard - movieLevel + 30) <= 0.3, "the movie is \(heard - movieLevel) dB under its own level")
        // Measured per 10 ms block against the movie: never deeper than the bound once it is reached.
        let blocks = LoudnessDuckTests.blockDepths(main: rendered.main, movie: movie)
        let held = blocks[(settled.lowerBound / (rate / 100))...]
        #expect(held.allSatisfy { abs($0 + 30) < 0.05 }, "\(held.min() ?? 0)…\(held.max() ?? 0) dB")
    }
}
