import Foundation
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// The loudness duck over speech with pauses and several speakers, the figures the LoudnessDucking
/// article and the CHANGELOG give: per case, margin and material, voice − movie as heard by FFmpeg's
/// `ebur128` over 3 s windows (median, 5th and 95th percentiles), the worst rise of the movie within 2 s
/// while someone speaks (of the depth: the main stem over the movie), and how many rises over 1 dB that
/// makes a minute.
@Suite("Loudness ducks over natural speech")
struct LoudnessDuckSpeechTests {
    typealias Scene = LoudnessDuckScene
    static let rate = Scene.rate
    static let seconds = 24

    enum Material: String, CaseIterable {
        /// Noise swelling ±4 dB twice a second.
        case noise
        /// Chords, bass and a kick at a steady level.
        case chords
        /// The same, drifting ±2 dB over 9 s.
        case drifting
        /// Chords under two speakers 4 LU apart: −21 and −25 LUFS, turn by turn.
        case twoSpeakers
        /// The swelling noise under the same two speakers.
        case twoSpeakersNoise

        var isTwoSpeakers: Bool { self == .twoSpeakers || self == .twoSpeakersNoise }
    }

    enum Case: String, CaseIterable {
        /// The loudness duck alone.
        case alone
        /// The host's volume 1 → 0.5 at 8 s, back to 1 at 16 s.
        case volume
        /// A fixed duck taken at 8 s and released at 14 s.
        case fixedDuck
    }

    static func movie(_ material: Material) throws -> [Float] {
        switch material {
        case .noise, .twoSpeakersNoise:
            try LoudnessDuckTests.scaled(LoudnessDuckTests.movieNoise(seconds: seconds, swell: 4, seed: 77), to: -14)
        case .chords, .twoSpeakers: try Scene.chords(seconds: seconds, lufs: -16)
        case .drifting: try Scene.chords(seconds: seconds, lufs: -16, drift: 2, period: 9)
        }
    }

    /// The speech, made once: one speaker level, and two speakers 4 LU apart, two sentences a turn
    /// (turns of 5 to 10 s: long enough to measure from 3 s into each).
    static let speech: Result<(one: [Float], two: [Float], turns: [Range<Int>]), any Error> = Result {
        let speakers = LoudnessDuckCompositionTests.speakers
        let two = try Scene.turns(seconds: Double(seconds), voices: speakers, levels: [-21, -25], sentences: 2)
        return (try Scene.talk(seconds: Double(seconds), voices: speakers), two.samples, two.turns)
    }

    static func voice(_ material: Material) throws -> [Float] {
        let speech = try speech.get()
        return material.isTwoSpeakers ? speech.two : speech.one
    }

    struct Figures: CustomStringConvertible {
        var median: Double
        var low: Double
        var high: Double
        var worstRise: Double
        var risesPerMinute: Double
        /// Two speakers: voice − movie from 3 s into each turn (the turn's loudness over the movie's in
        /// 1 s windows every 0.5 s to the turn's end), its 5th percentile and median.
        var turnLow = Double.nan
        var turnMedian = Double.nan
        var description: String {
            String(
                format: "median %.2f LU, 5th–95th %.2f…%.2f, worst rise in 2 s %.2f dB, %.1f rises/min", median, low,
                high, worstRise, risesPerMinute)
                + (turnLow.isNaN
                    ? "" : String(format: "; from 3 s into each turn median %.2f, 5th %.2f", turnMedian, turnLow))
        }
    }

    /// Voice − movie from 3 s into each turn of at least 4 s: the turn's loudness (its speaker's, as
    /// `ebur128` integrates it) over the movie's as heard in 1 s windows every 0.5 s up to the turn's end.
    static func turnDifferences(_ rendered: Scene.Rendered, turns: [Range<Int>]) throws -> [Double] {
        let measured = turns.filter { $0.count >= 4 * rate }
        let voices = try LoudnessDuckTests.ffmpegLoudness(rendered.voice, windows: measured)
        let windows = measured.map { turn in
            stride(from: turn.lowerBound + 3 * rate, through: turn.upperBound - rate, by: rate / 2).map {
                $0..<($0 + rate)
            }
        }
        var movies = try LoudnessDuckTests.ffmpegLoudness(rendered.main, windows: windows.flatMap { $0 })[...]
        return zip(voices, windows).flatMap { voice, turnWindows in
            let movie = movies.prefix(turnWindows.count)
            movies = movies.dropFirst(turnWindows.count)
            return movie.map { voice - $0 }
        }
    }

    /// The 10 ms blocks in which the voice speaks (a peak at the threshold within the last 300 ms),
    /// from `from` s on.
    static func speaking(_ voice: [Float], from: Double) -> [Int] {
        let threshold = VoiceActivityPolicy.default.linearThreshold
        let block = rate / 100
        var last = -1_000
        var result: [Int] = []
        for index in 0..<(voice.count / 2 / block) {
            let start = index * block * 2
            if voice[start..<(start + block * 2)].contains(where: { abs($0) >= threshold }) { last = index }
            if index - last <= 30, Double(index) / 100 >= from { result.append(index) }
        }
        return result
    }

    static func figures(_ material: Material, _ scene: Case, margin: Float) throws -> Figures {
        let movie = try movie(material)
        let voice = try voice(material)
        let actions: [(frame: Int, action: Scene.Action)] =
            switch scene {
            case .alone: []
            case .volume: [(8 * rate, .volume(0.5)), (16 * rate, .volume(1))]
            case .fixedDuck: [(8 * rate, .takeFixedDuck()), (14 * rate, .releaseFixedDuck)]
            }
        let rendered = try Scene.render(movie: movie, voice: voice, margin: margin, actions: actions)
        let ranges = stride(from: 3.0, through: Double(seconds) - 3, by: 1).map { start in
            Int(start * Double(rate))..<Int((start + 3) * Double(rate))
        }
        let windows = zip(
            try LoudnessDuckTests.ffmpegLoudness(rendered.voice, windows: ranges),
            try LoudnessDuckTests.ffmpegLoudness(rendered.main, windows: ranges)
        ).map { $0 - $1 }
        let spread = Scene.spread(windows)
        // Rises: the movie as heard (its depth) above the lowest of the 2 s before, while someone
        // speaks, once the duck has settled (3 s); the 2.5 s after the host's or the fixed duck's own move up
        // excluded.
        let blocks = Scene.blocks(rendered)
        let excluded: [Range<Int>] =
            switch scene {
            case .alone: []
            case .volume: [1600..<1850]
            case .fixedDuck: [1400..<1650]
            }
        var worst = 0.0
        var rises = 0
        var rising = false
        var spoken = 0
        for block in speaking(voice, from: 3) where block < blocks.count {
            spoken += 1
            guard !excluded.contains(where: { $0.contains(block) }) else { continue }
            let lowest = blocks[max(300, block - 200)...block].min() ?? blocks[block]
            let rise = blocks[block] - lowest
            worst = max(worst, rise)
            if rise > 1, !rising { rises += 1 }
            rising = rise > 1
        }
        var figures = Figures(
            median: spread.median, low: spread.low, high: spread.high, worstRise: worst,
            risesPerMinute: Double(rises) * 6000 / Double(max(1, spoken)))
        if material.isTwoSpeakers {
            let turns = Scene.spread(try turnDifferences(rendered, turns: try speech.get().turns))
            figures.turnLow = turns.low
            figures.turnMedian = turns.median
        }
        return figures
    }

    @Test(
        "over speech with pauses the voice is held at the margin, the median within 1 LU (on steady music or noise, 5th–95th within 1.5 LU); the movie never rises 1 dB within 2 s while someone speaks",
        arguments: [Float(10), 15])
    func margins(margin: Float) throws {
        for material in Material.allCases {
            for scene in Case.allCases {
                let figures = try Self.figures(material, scene, margin: margin)
                print("[measure] loudness duck, \(scene.rawValue), margin \(margin), \(material.rawValue): \(figures)")
                if scene == .alone, !material.isTwoSpeakers {
                    #expect(abs(figures.median - Double(margin)) <= 1, "\(material): \(figures)")
                }
                if scene == .alone, material == .chords || material == .noise {
                    // Measured: 5th–95th margin −0.8…+1.1 LU on both. Drifting music and a louder speaker
                    // after a quieter one spread wider (the LoudnessDucking article's figures).
                    #expect(
                        figures.low >= Double(margin) - 1.5 && figures.high <= Double(margin) + 1.5,
                        "\(material): \(figures)")
                }
                if scene == .volume {
                    // Half the host's volume for 8 s of the 18 measured: the movie 6 dB further down.
                    #expect(figures.median >= Double(margin) - 1, "\(material): \(figures)")
                }
                // On steady material, on music that drifts ±2 dB over 9 s, and with a louder speaker after
                // a quieter one, the movie never rises by more than 1 dB within 2 s while someone speaks.
                #expect(figures.worstRise <= 1, "\(scene), \(material): \(figures)")
                #expect(figures.risesPerMinute == 0, "\(scene), \(material): \(figures)")
                if material.isTwoSpeakers {
                    // The quieter speaker is held within 1 LU of the margin from 3 s into their turn.
                    #expect(figures.turnLow >= Double(margin) - 1, "\(scene): \(figures)")
                }
            }
        }
    }
}
