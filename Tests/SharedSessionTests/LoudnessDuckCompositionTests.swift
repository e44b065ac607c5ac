import Foundation
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// The loudness duck under what users do: its readings against what is heard, the host's volume turned
/// during it, a fixed duck taken and released over it. Everything is measured on the rendered stems (the
/// main stem's samples over the movie's, and FFmpeg's `ebur128`), never on the engine's readings.
@Suite("Loudness ducks with other ducks and the host's volume")
struct LoudnessDuckCompositionTests {
    typealias Scene = LoudnessDuckScene
    static let rate = Scene.rate

    /// Three speakers, one German, one French, with pauses of 0.35 to 0.9 s.
    static let speakers: [Speech.Voice] = [
        .init("en-gb+f3", ["-s", "165"]), .init("de", ["-s", "160", "-g", "20"]), .init("fr", ["-s", "150"]),
    ]

    static let material: Result<(noise: [Float], chords: [Float], voice: [Float]), any Error> = Result {
        let noise = try LoudnessDuckTests.scaled(
            LoudnessDuckTests.movieNoise(seconds: 24, swell: 4, seed: 4242), to: -14)
        return (noise, try Scene.chords(seconds: 24, lufs: -14), try Scene.talk(seconds: 24, voices: speakers))
    }

    static func movie(_ name: String) throws -> [Float] {
        let material = try material.get()
        return name == "chords" ? material.chords : material.noise
    }

    /// The blocks (10 ms) from `start` s to `end` s.
    static func blocks(_ start: Double, _ end: Double) -> Range<Int> { Int(start * 100)..<Int(end * 100) }

    @Test("the depth read from StreamHandle, events and the snapshot is the gain applied, and 0 once released")
    func readingsAreWhatIsHeard() throws {
        let material = try Self.material.get()
        // Ten seconds of talk, then silence: the duck releases after the hold.
        var voice = material.voice
        for index in (10 * Self.rate * 2)..<voice.count { voice[index] = 0 }
        let rendered = try Scene.render(movie: material.noise, voice: voice, margin: 10)
        var worst = 0.0
        var compared = 0
        for (frame, reading) in rendered.readings {
            guard let reading, let applied = Scene.appliedDepth(rendered, endingAt: frame) else { continue }
            worst = max(worst, abs(Double(reading.depth) - applied))
            compared += 1
            #expect(
                abs(Double(reading.depth) - applied) <= 0.05, "at \(frame): read \(reading.depth), heard \(applied)")
        }
        print("[measure] loudness duck reading against the gain applied: worst \(worst) dB over \(compared) quanta")
        #expect(compared > 400)
        // Each event's depth is the gain applied in the quantum it came in; the snapshot holds the last
        // event's, so it is at most a report step (1 dB) from the gain applied. Measured: events 1e-6 dB,
        // the snapshot 0.997 dB; the readings' 0.05 dB on top.
        var worstEvent = 0.0
        var events = 0
        for (depth, frame) in zip(rendered.reported, rendered.reportedAt) where depth != 0 {
            guard let applied = Scene.appliedDepth(rendered, endingAt: frame) else { continue }
            worstEvent = max(worstEvent, abs(Double(depth) - applied))
            events += 1
        }
        var worstSnapshot = 0.0
        var snapshots = 0
        for (frame, depth) in rendered.snapshotDepths {
            guard let depth, depth != 0, let applied = Scene.appliedDepth(rendered, endingAt: frame) else { continue }
            worstSnapshot = max(worstSnapshot, abs(Double(depth) - applied))
            snapshots += 1
        }
        print(
            "[measure] loudness duck against the gain applied: events worst \(worstEvent) dB over \(events), "
                + "snapshot worst \(worstSnapshot) dB over \(snapshots) quanta")
        #expect(events > 5)
        #expect(worstEvent <= 0.05, "an event's depth is \(worstEvent) dB from the gain applied")
        #expect(snapshots > 400)
        #expect(
            worstSnapshot <= Double(LoudnessDuckReading.reportStep) + 0.05,
            "the snapshot's depth is \(worstSnapshot) dB from the gain applied")
        let policy = VoiceActivityPolicy.default
        let lastWord = (0..<(10 * Self.rate)).last { abs(voice[$0 * 2]) >= policy.linearThreshold } ?? 0
        let released = lastWord + Int((policy.hold + policy.release).inSeconds * Double(Self.rate)) + 1024
        let after = rendered.readings.filter { $0.frame >= released }.map { $0.reading?.depth }
        #expect(!after.isEmpty && after.allSatisfy { $0 == 0 }, "read \(after.compactMap { $0 }.min() ?? 0) dB")
        #expect(rendered.reported.last == 0, "the last event reported \(rendered.reported.last ?? .nan) dB")
        #expect(rendered.snapshot.loudnessDuck?.depth == 0)
    }

    @Test(
        "the host's volume turned down during a loudness duck is heard at once by its full amount; turned up, never above the voice minus the margin",
        arguments: ["noise", "chords"])
    func hostVolumeIsHeard(movieName: String) throws {
        let movie = try Self.movie(movieName)
        let voice = try Self.material.get().voice
        let reference = Scene.blocks(try Scene.render(movie: movie, voice: voice))
        let turned = try Scene.render(
            movie: movie, voice: voice, actions: [(8 * Self.rate, .volume(0.5)), (16 * Self.rate, .volume(1))])
        let heard = Scene.blocks(turned)
        let half = 20 * log10(0.5)
        // Down: within the fade (150 ms) and the attack, the movie is 6 dB under where it would be.
        let down = Self.blocks(8.2, 16).map { heard[$0] - reference[$0] }
        print(
            "[measure] loudness duck, \(movieName), volume 1 → 0.5: \(down.min()!)…\(down.max()!) dB against the duck "
                + "alone (\(half) asked)"
        )
        for (offset, difference) in down.enumerated() {
            #expect(abs(difference - half) <= 0.5, "\(8.2 + Double(offset) / 100) s: \(difference) dB")
        }
        // Up: never above the duck alone, and back at it within the release.
        let up = Self.blocks(16, 24).map { heard[$0] - reference[$0] }
        print(
            "[measure] loudness duck, \(movieName), volume 0.5 → 1: \(up.min()!)…\(up.max()!) dB against the duck alone"
        )
        #expect(up.allSatisfy { $0 <= 0.5 }, "\(up.max()!) dB above the duck alone")
        #expect(Self.blocks(16.5, 24).allSatisfy { abs(heard[$0] - reference[$0]) <= 0.5 })
        let differences = try Scene.differences(turned, seconds: 17..<24)
        let alone = try Scene.differences(try Scene.render(movie: movie, voice: voice), seconds: 17..<24)
        print(
            "[measure] loudness duck, \(movieName), after the volume came back: voice − movie \(differences) LU, the duck alone \(alone)"
        )
        for (turned, alone) in zip(differences, alone) { #expect(turned >= alone - 0.2) }
    }

    /// What the main stream's own gain is in ``readingsUnderOwnGain(_:)``: the host's volume, or a fixed
    /// duck, each at 0.5 (−6 dB) from the start.
    enum OwnGain: String, CaseIterable {
        case hostVolume
        case fixedDuck
    }

    @Test(
        "at the host's volume 0.5 and under a fixed duck to 0.5, the readings are what is heard: the depth under that gain, the movie's loudness at it, the voice over the movie",
        arguments: OwnGain.allCases)
    func readingsUnderOwnGain(_ own: OwnGain) throws {
        let material = try Self.material.get()
        let actions: [(frame: Int, action: Scene.Action)] =
            switch own {
            case .hostVolume: [(0, .volume(0.5))]
            case .fixedDuck: [(0, .takeFixedDuck(level: 0.5))]
            }
        let rendered = try Scene.render(movie: material.noise, voice: material.voice, margin: 10, actions: actions)
        let gain = 20 * log10(0.5)
        // The depth: the main stem over the movie, less the stream's own gain, in every quantum from 3 s on.
        var worst = 0.0
        var compared = 0
        for (frame, reading) in rendered.readings where frame >= 3 * Self.rate {
            guard let reading, let applied = Scene.appliedDepth(rendered, endingAt: frame) else { continue }
            worst = max(worst, abs(Double(reading.depth) - (applied - gain)))
            compared += 1
        }
        // The movie's loudness and the difference, each 3 s from 6 s on, against FFmpeg over the 3 s
        // before: the movie at its own gain, and the voice over the movie as heard.
        let marks = [6, 9, 12, 15, 18, 21, 24].map { $0 * Self.rate - 1 }
        let windows = marks.map { ($0 + 1 - 3 * Self.rate)..<($0 + 1) }
        let movie = try LoudnessDuckTests.ffmpegLoudness(rendered.movie, windows: windows).map { $0 + gain }
        let heard = try Scene.differences(rendered, windows: windows)
        var lines: [String] = []
        for (index, mark) in marks.enumerated() {
            let reading = try #require(rendered.readings.last { $0.frame <= mark }?.reading, "no reading at \(mark)")
            // Measured: the movie within 0.06 LU, the difference within 0.9 LU (the voice's loudness is
            // read over its speech, FFmpeg's over the window's 3 s, pauses gated).
            #expect(abs(Double(reading.mainLoudness ?? .nan) - movie[index]) <= 0.5, "at \(mark): \(reading)")
            #expect(abs(Double(reading.difference ?? .nan) - heard[index]) <= 1.5, "at \(mark): \(reading)")
            lines.append(
                String(
                    format: "%d s: movie read %.2f, heard %.2f LUFS; difference read %.2f, heard %.2f LU",
                    (mark + 1) / Self.rate, reading.mainLoudness ?? .nan, movie[index], reading.difference ?? .nan,
                    heard[index]))
        }
        print(
            "[measure] loudness duck readings, \(own.rawValue): depth worst \(worst) dB over \(compared) quanta; \(lines)"
        )
        #expect(compared > 300)
        #expect(worst <= 0.05, "the depth read is \(worst) dB from the gain applied under the stream's own")
    }

    /// Whether `values` never goes the wrong way by more than `slack` dB from one block to the next.
    static func monotonic(_ values: [Double], down: Bool, slack: Double = 0.05) -> Bool {
        zip(values, values.dropFirst()).allSatisfy { down ? $1 <= $0 + slack : $1 >= $0 - slack }
    }

    @Test(
        "a fixed duck taken and released over a loudness duck moves the movie to the lower of the two, monotonically, within its ramp",
        arguments: ["noise", "chords"])
    func fixedDuckOverLoudness(movieName: String) throws {
        let movie = try Self.movie(movieName)
        let voice = try Self.material.get().voice
        // Margin 5: the loudness duck alone holds the movie about 14 dB down, above the fixed −20 dB.
        let reference = Scene.blocks(try Scene.render(movie: movie, voice: voice, margin: 5))
        let rendered = try Scene.render(
            movie: movie, voice: voice, margin: 5,
            actions: [(8 * Self.rate, .takeFixedDuck()), (14 * Self.rate, .releaseFixedDuck)])
        let heard = Scene.blocks(rendered)
        let fixed = -20.0
        // Taken: down along the fade (150 ms), then within 1 dB of the lower of the two.
        // Against the loudness duck alone, so that its own slow moves (6 dB/s at most) do not count.
        #expect(Self.monotonic(Self.blocks(8, 8.16).map { heard[$0] - reference[$0] }, down: true))
        let taken = Self.blocks(8.16, 14).map { heard[$0] - min(fixed, reference[$0]) }
        print(
            "[measure] fixed duck over a loudness duck, \(movieName): \(taken.min()!)…\(taken.max()!) dB from the target"
        )
        #expect(taken.allSatisfy { abs($0) <= 1 }, "\(taken.min()!)…\(taken.max()!) dB")
        // Released: up along the fade (400 ms), to the loudness duck's level, never above it.
        #expect(Self.monotonic(Self.blocks(14, 14.41).map { heard[$0] - reference[$0] }, down: false))
        let released = Self.blocks(14, 24).map { heard[$0] - reference[$0] }
        print("[measure] fixed duck released, \(movieName): \(released.max()!) dB above the loudness duck at most")
        #expect(released.allSatisfy { $0 <= 1 }, "\(released.max()!) dB above the loudness duck")
        #expect(Self.blocks(14.41, 24).allSatisfy { abs(heard[$0] - reference[$0]) <= 1 })
        let differences = try Scene.differences(rendered, seconds: 14..<20)
        print("[measure] fixed duck released, \(movieName): voice − movie \(differences) LU (margin 5)")
        #expect(differences.allSatisfy { $0 >= 2 }, "the voice more than 3 LU under its margin")
    }

    @Test(
        "a loudness duck taken under a fixed one never lifts the movie above it and takes it down to its own level",
        arguments: ["noise", "chords"])
    func loudnessUnderFixedDuck(movieName: String) throws {
        let movie = try Self.movie(movieName)
        let voice = try Self.material.get().voice
        // Margin 15: the loudness duck asks about 24 dB down, under the fixed −20 dB. Its own level is the
        // same duck taken at the same moment with no fixed duck: its meters start when it is taken, so a
        // duck taken at the start would have heard 8 s more of the voice.
        let reference = Scene.blocks(
            try Scene.render(
                movie: movie, voice: voice, margin: 15, actions: [(8 * Self.rate, .takeLoudnessDuck)],
                loudnessAtStart: false))
        let rendered = try Scene.render(
            movie: movie, voice: voice, margin: 15,
            actions: [(0, .takeFixedDuck()), (8 * Self.rate, .takeLoudnessDuck)], loudnessAtStart: false)
        let heard = Scene.blocks(rendered)
        let before = Self.blocks(7, 8).map { heard[$0] }
        #expect(before.allSatisfy { abs($0 + 20) <= 0.05 })
        // Never above the fixed duck, and within 1 dB of the lower of the two from the moment the loudness
        // duck is taken: its level moves exactly as it would alone (it goes under the fixed duck once its
        // first figures, young, ask for more than 20 dB), and the fixed duck's gain is never raised.
        #expect(Self.blocks(8, 24).allSatisfy { heard[$0] <= -19.95 }, "above the fixed duck")
        let under = (800..<2400).first { heard[$0] < -20.5 } ?? 2400
        let underAlone = (800..<2400).first { reference[$0] < -20.5 } ?? 2400
        print(
            "[measure] loudness duck under a fixed duck, \(movieName): under it \((under - 800) * 10) ms after "
                + "it was taken; alone, under −20.5 dB after \((underAlone - 800) * 10) ms")
        let held = Self.blocks(8, 24).map { heard[$0] - min(-20, reference[$0]) }
        print(
            "[measure] loudness duck under a fixed duck, \(movieName): from its taking on \(held.min()!)…\(held.max()!) dB "
                + "from the target"
        )
        #expect(held.allSatisfy { abs($0) <= 1 }, "\(held.min()!)…\(held.max()!) dB from the target")
        // And the voice is never more than 3 LU under its margin, nor the movie more than 3 LU deeper than
        // the margin asks, as FFmpeg hears them in any 3 s window from the duck's taking on (measured:
        // 12.1 in the first, the voice's own figure still young, then 12.8…15.4 LU).
        let differences = try Scene.differences(rendered, seconds: 8..<24)
        print("[measure] loudness duck under a fixed duck, \(movieName): voice − movie \(differences) LU (margin 15)")
        #expect(differences.allSatisfy { $0 >= 12 }, "\(differences)")
        #expect(differences.allSatisfy { $0 <= 18 }, "the movie too deep: \(differences)")
    }

    @Test("a loudness duck released while the voice still speaks brings the movie back along its release")
    func releasedWhileSpeaking() throws {
        let movie = try Self.movie("chords")
        let voice = try Self.material.get().voice
        let rendered = try Scene.render(
            movie: movie, voice: voice, margin: 15, actions: [(12 * Self.rate, .releaseLoudnessDuck)])
        let heard = Scene.blocks(rendered)
        let before = heard[1150..<1200].reduce(0, +) / 50
        let back = (1200..<2400).first { heard[$0] > -0.5 } ?? 2400
        print(
            "[measure] loudness duck released while speaking: from \(before) dB back within 0.5 dB of 0 in "
                + "\(Double(back - 1200) * 10) ms")
        // Along the voice-activity release, not the loudness duck's slow follow (measured: 380 ms).
        #expect(before < -15, "the duck was not down: \(before) dB")
        #expect(back <= 1200 + 100, "back \(Double(back - 1200) * 10) ms after the release")
    }
}
