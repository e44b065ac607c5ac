import Foundation
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// The loudness duck on the offline engine, measured on the rendered stems: a far end's voice (espeak-ng
/// speech through Opus, at −23 LUFS) over a movie whose mix swells and fades twice a second and steps
/// from −14 to −30 LUFS and back. The loudness of the stems is measured by FFmpeg's `ebur128` filter,
/// a BS.1770 meter that is not ours, so a wrong weighting or window in ours shows here too.
@Suite("Loudness ducks")
struct LoudnessDuckTests {
    static let rate = 48_000
    /// The movie's sections: 12 s at −14 LUFS, 12 s at −30, 12 s at −14.
    static let sections: [(seconds: Int, lufs: Double)] = [(12, -14), (12, -30), (12, -14)]
    /// From a step of the movie to the difference held: every 3 s window that starts 3 s or more after
    /// the step holds it. Measured in 0.5 s steps: from 2.5 s after the step to −30 LUFS (the window
    /// forgetting the loud section, then the depth up at 6 dB/s), 2.0 s after the step to −14.
    static let settling = 3
    /// From a step to the depth at its new level, where no rise may follow: 6 s.
    static let depthSettling = 6

    // MARK: Material

    /// Noise low-passed at about 1.5 kHz whose level swells ±`swell` dB twice a second, as a movie's
    /// mix moves with its music and effects: mono, deterministic.
    static func movieNoise(seconds: Int, swell: Double, seed: UInt64) -> [Float] {
        var state = seed | 1
        var low = 0.0
        let alpha = 1 - exp(-2 * Double.pi * 1500 / Double(rate))
        return (0..<(seconds * rate)).map { frame in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let white = Double(state % 2_000_001) / 1_000_000 - 1
            low += alpha * (white - low)
            let envelope = pow(10, swell * sin(2 * Double.pi * 2 * Double(frame) / Double(rate)) / 20)
            return Float(low * envelope)
        }
    }

    /// `mono` as dual-mono stereo, scaled so its integrated loudness is `lufs` (by our meter; FFmpeg's
    /// agrees within 0.1 LU on this material).
    static func scaled(_ mono: [Float], to lufs: Double) throws -> [Float] {
        let stereo = mono.flatMap { [$0, $0] }
        let meter = try LoudnessMeter()
        stereo.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: mono.count) }
        let factor = Float(pow(10, (lufs - meter.integrated) / 20))
        return stereo.map { $0 * factor }
    }

    static func movie(swell: Double = 4) throws -> [Float] {
        try sections.enumerated().flatMap { index, section in
            try scaled(
                movieNoise(seconds: section.seconds, swell: swell, seed: UInt64(index + 1) * 7919), to: section.lufs)
        }
    }

    static let voices: [Speech.Voice] = [
        .init("en-us", ["-s", "150"]), .init("en-gb+f3", ["-s", "175"]), .init("en-us+m3", ["-s", "160"]),
    ]
    static let lines = [
        "Wait, did you see that? I think he knew the whole time.",
        "No way. He would never have gone back to the house alone.",
        "Look at his face when the door opens. He is not surprised at all.",
        "Okay, you might be right. Pause it for a second, I need a drink.",
    ]

    /// A far end talking for `seconds`: turns in three voices, 300 ms apart, at −23 LUFS, stereo.
    static func farEnd(seconds: Int) throws -> [Float] {
        var mono: [Float] = []
        var turn = 0
        while mono.count < seconds * rate {
            let voice = voices[turn % voices.count]
            mono += try Speech.make(lines[turn % lines.count], voice: voice, trimmedAt: 0.01)
            mono += [Float](repeating: 0, count: rate * 3 / 10)
            turn += 1
        }
        return try scaled(Array(mono.prefix(seconds * rate)), to: -23)
    }

    // MARK: Rendering

    struct Rendered {
        var main: [Float]
        var voice: [Float]
        var movie: [Float]
        var readings: [LoudnessDuckReading?]
        var snapshot: SessionSnapshot
    }

    final class Readings: SharedSessionDelegate, @unchecked Sendable {
        // @unchecked: the offline engine delivers every event on the thread that renders, the test's.
        var readings: [LoudnessDuckReading?] = []
        func session(_ session: SharedSession, didEmit event: SessionEvent) {
            if case .loudnessDuckChanged(_, let reading) = event.kind { readings.append(reading) }
        }
    }

    /// Renders `voice` ducking `movie` by loudness under `policy` (the duck's `margin`, its owner's
    /// `limits`), in 1024-frame quanta.
    static func render(
        movie: [Float], voice: [Float], policy: LoudnessDuckPolicy = .default, margin: Float? = nil,
        limits: UnitLimits = .unlimited, format: AudioFormat = .standard
    ) throws -> Rendered {
        let engine = OfflineEngine(format: format)
        let session = SharedSession(
            engine: engine, policy: try SessionPolicy(defaultUnitLimits: limits, loudnessDuck: policy))
        let readings = Readings()
        session.delegate = readings
        let main = try session.openMainStream(source: try PCMBufferSource(samples: movie, loops: false))
        let far = try session.openStream(
            StreamDescriptor(name: "far end", role: .communication),
            source: try PCMBufferSource(samples: voice, loops: false), owner: "watch-party")
        let duck = try session.duck(DuckRequest(owner: "watch-party", style: .followLoudness(far.id, margin: margin)))
        var rendered = Rendered(main: [], voice: [], movie: movie, readings: [], snapshot: session.snapshot)
        let frames = min(movie.count, voice.count) / 2
        rendered.main.reserveCapacity(frames * 2)
        rendered.voice.reserveCapacity(frames * 2)
        while rendered.main.count < frames * 2 {
            let block = try engine.render(frames: min(1024, frames - rendered.main.count / 2))
            rendered.main += block.stems[main.id] ?? []
            rendered.voice += block.stems[far.id] ?? []
        }
        rendered.snapshot = session.snapshot
        rendered.readings = readings.readings
        withExtendedLifetime(duck) {}
        return rendered
    }

    // MARK: Measuring

    struct LoudnessReportMissing: Error, CustomStringConvertible {
        let report: String
        var description: String { "no integrated loudness in FFmpeg's report: \(report)" }
    }

    /// FFmpeg's integrated (gated) loudness of `samples[range]` (frames), stereo at 48 kHz.
    static func ffmpegLoudness(_ samples: [Float], frames range: Range<Int>) throws -> Double {
        try ffmpegLoudness(samples, windows: [range])[0]
    }

    /// FFmpeg's integrated (gated) loudness of each of `windows` of `samples` (frames), stereo at 48 kHz,
    /// from one ffmpeg process: the windows are cut from one file to the sample (`atrim`) and each is
    /// metered by an `ebur128` of its own (named `ebur128@wN` in the report), so each reads what the
    /// window alone in a file of its own reads, without an ffmpeg started per window.
    static func ffmpegLoudness(_ samples: [Float], windows: [Range<Int>]) throws -> [Double] {
        guard let first = windows.map(\.lowerBound).min(), let last = windows.map(\.upperBound).max() else { return [] }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loudness-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).wav"
        ).path
        defer { unlink(path) }
        try WAVFile.write(Array(samples[(first * 2)..<(last * 2)]), to: path)
        var graph = "[0:a]asplit=\(windows.count)" + windows.indices.map { "[s\($0)]" }.joined()
        var arguments = ["-hide_banner", "-nostats", "-i", path]
        for (index, window) in windows.enumerated() {
            graph +=
                ";[s\(index)]atrim=start_sample=\(window.lowerBound - first):end_sample=\(window.upperBound - first),"
                + "ebur128@w\(index)=framelog=verbose[o\(index)]"
        }
        arguments += ["-filter_complex", graph]
        for index in windows.indices { arguments += ["-map", "[o\(index)]", "-f", "null", "-"] }
        let report = try Tool.errorOutput(
            of: "ffmpeg", arguments, missing: "ffmpeg is not installed: run Scripts/install media")
        // Each meter's summary: "[ebur128@wN @ 0x…] Summary:", then its "I: … LUFS" line.
        var readings: [Int: Double] = [:]
        var meter: Int?
        for line in report.split(separator: "\n") {
            if line.hasPrefix("[ebur128@w"), line.hasSuffix("Summary:") {
                meter = Int(line.dropFirst("[ebur128@w".count).prefix { $0.isNumber })
            } else if let index = meter, line.contains("I:") {
                readings[index] = line.split(separator: " ").compactMap { Double($0) }.first
                meter = nil
            }
        }
        return try windows.indices.map { index in
            guard let value = readings[index] else { throw LoudnessReportMissing(report: String(report.suffix(400))) }
            return value
        }
    }

    /// The difference heard, voice − main in LU by FFmpeg's meter, over 3 s windows every second from
    /// `settling` s after each section's start to its end.
    static func differences(_ rendered: Rendered) throws -> [[Double]] {
        var start = 0
        var result: [[Double]] = []
        for section in sections {
            let windows = stride(from: start + settling * rate, through: start + (section.seconds - 3) * rate, by: rate)
                .map { $0..<($0 + 3 * rate) }
            let voice = try ffmpegLoudness(rendered.voice, windows: windows)
            let main = try ffmpegLoudness(rendered.main, windows: windows)
            result.append(zip(voice, main).map { $0 - $1 })
            start += section.seconds * rate
        }
        return result
    }

    /// The depth applied, in dB, at each frame where the movie is loud enough to tell: the main stem over
    /// the movie.
    static func depths(_ rendered: Rendered) -> [(frame: Int, depth: Double)] {
        stride(from: 0, to: rendered.main.count, by: 2).compactMap { index in
            let source = Double(rendered.movie[index])
            guard abs(source) > 1e-3 else { return nil }
            return (index / 2, 20 * log10(max(1e-9, Double(rendered.main[index]) / source)))
        }
    }

    /// The depth in each 10 ms block, in dB: the main stem's RMS over the movie's.
    static func blockDepths(main: [Float], movie: [Float]) -> [Double] {
        let block = rate / 100 * 2
        return stride(from: 0, to: min(main.count, movie.count) - block + 1, by: block).map { start in
            var heard = 0.0
            var source = 0.0
            for index in start..<(start + block) {
                heard += Double(main[index]) * Double(main[index])
                source += Double(movie[index]) * Double(movie[index])
            }
            return source > 0 ? 10 * log10(max(1e-18, heard / source)) : 0
        }
    }

    /// The pumping figure: how many times, in the 10 ms `blocks` given, the depth rises more than 1 dB
    /// above the lowest it was in the 2 s before. For a fixed duck it is the voice-activity work's
    /// figure (a rise of more than 1 dB above the duck); a loudness duck that moves with what it
    /// measures is held to the same.
    static func rises(_ depths: [Double], in blocks: Range<Int>) -> Int {
        var count = 0
        var rising = false
        for block in blocks where block < depths.count {
            let lowest = depths[max(blocks.lowerBound, block - 200)...block].min() ?? depths[block]
            let above = depths[block] > lowest + 1
            if above, !rising { count += 1 }
            rising = above
        }
        return count
    }

    static let material: Result<(movie: [Float], voice: [Float]), any Error> = Result {
        (try movie(), try farEnd(seconds: sections.reduce(0) { $0 + $1.seconds }))
    }

    // MARK: Tests

    @Test(
        "voice over a movie stepping −14 → −30 → −14 LUFS: the voice is held 10 LU above it within ±1 LU from 3 s after each step, the depth within its bounds, never above the host's volume"
    )
    func differenceHeld() throws {
        let (movie, voice) = try Self.material.get()
        let rendered = try Self.render(movie: movie, voice: voice)
        let differences = try Self.differences(rendered)
        for (index, section) in differences.enumerated() {
            let sorted = section.sorted()
            print(
                "[measure] loudness duck, section \(index) (\(Self.sections[index].lufs) LUFS): voice − movie median "
                    + "\(sorted[sorted.count / 2]) LU, range \(sorted.first!)…\(sorted.last!) over \(sorted.count) "
                    + "windows"
            )
            for difference in section {
                #expect(abs(difference - 10) <= 1, "section \(index): the voice is \(difference) LU above the movie")
            }
        }
        let depths = Self.depths(rendered)
        let deepest = depths.map(\.depth).min() ?? 0
        let highest = depths.map(\.depth).max() ?? 0
        print("[measure] loudness duck depth: \(deepest) dB to \(highest) dB")
        #expect(deepest >= -30.05, "deeper than the policy's bound")
        #expect(highest <= 0.001, "the movie went above the host's volume")
        // In the loud sections the movie is down by about 19 dB (−14 − (−23 − 10)); in the quiet one by
        // about 3.
        let loud = depths.filter { (8 * Self.rate..<12 * Self.rate).contains($0.frame) }.map(\.depth)
        let quiet = depths.filter { (20 * Self.rate..<24 * Self.rate).contains($0.frame) }.map(\.depth)
        let loudMean: Double = loud.reduce(0, +) / Double(max(1, loud.count))
        let quietMean: Double = quiet.reduce(0, +) / Double(max(1, quiet.count))
        print("[measure] loudness duck mean depth: \(loudMean) dB at −14 LUFS, \(quietMean) dB at −30 LUFS")
        #expect(abs(loudMean + 19) < 1.5)
        #expect(abs(quietMean + 3) < 1.5)
        // No pumping on the swelling movie: once the depth has reached its new level (6 s after a
        // step: the window, then up to 16 dB at 6 dB/s), it never climbs back by a dB.
        let blocks = Self.blockDepths(main: rendered.main, movie: rendered.movie)
        var start = 0
        for section in Self.sections {
            let settled = (start + Self.depthSettling * 100)..<(start + section.seconds * 100)
            let count = Self.rises(blocks, in: settled)
            print("[measure] loudness duck rises in a settled section: \(count)")
            #expect(count == 0, "the depth pumps with the movie's swell")
            start += section.seconds * 100
        }
        // The events and the snapshot carry the depth: each report a dB or more from the last, the last
        // within 1 dB of what was rendered.
        let reported = rendered.readings.compactMap { $0?.depth }
        #expect(reported.count >= 30, "a dB at a time down 19, up 16 and down 16 dB again")
        for (before, after) in zip(reported, reported.dropFirst()) { #expect(abs(after - before) >= 1) }
        let last = try #require(rendered.snapshot.loudnessDuck)
        #expect(abs(Double(last.depth) - (depths.last?.depth ?? 0)) <= 1)
        #expect(abs(Double(last.sourceLoudness ?? 0) + 23) <= 1)
        #expect(abs(Double(last.mainLoudness ?? 0) + 14) <= 1)
    }

    @Test("the depth stays inside the policy's bounds and the unit's deepest level, named as the limit applied")
    func bounds() throws {
        let (movie, voice) = try Self.material.get()
        // Bounded at −12 dB: the loud sections, which ask for −19, stay at −12.
        let bounded = try Self.render(movie: movie, voice: voice, policy: try LoudnessDuckPolicy(deepest: -12))
        let loud = Self.depths(bounded).filter { (8 * Self.rate..<12 * Self.rate).contains($0.frame) }.map(\.depth)
        #expect(loud.allSatisfy { abs($0 + 12) < 0.05 }, "\(loud.min() ?? 0)…\(loud.max() ?? 0) dB")
        // The unit's deepest level (0.2, −14 dB) bounds it too, and is named.
        let limited = try Self.render(
            movie: movie, voice: voice, limits: try UnitLimits(deepestDuckLevel: 0.2))
        let limitedLoud = Self.depths(limited).filter { (8 * Self.rate..<12 * Self.rate).contains($0.frame) }.map(
            \.depth)
        #expect(limitedLoud.allSatisfy { abs($0 + 13.98) < 0.05 }, "\(limitedLoud.min() ?? 0) dB")
        #expect(limited.snapshot.ducks.first?.appliedLimits == [.deepestDuckLevel(0.2)])
        // A voice far louder than the movie asks for a positive depth: the movie stays at the host's
        // volume, never above.
        let loudVoice = voice.map { $0 * 8 }
        let shallow = try Self.render(movie: movie, voice: loudVoice, margin: 0)
        let quiet = Self.depths(shallow).filter { (14 * Self.rate..<24 * Self.rate).contains($0.frame) }.map(\.depth)
        #expect(quiet.allSatisfy { abs($0) < 0.001 }, "\(quiet.max() ?? 0) dB")
    }

    @Test("the short-term window holds the depth through a movie's swell; the momentary one pumps with it")
    func windows() throws {
        let (movie, voice) = try Self.material.get()
        var counts: [LoudnessDuckPolicy.Window: Int] = [:]
        for window in LoudnessDuckPolicy.Window.allCases {
            let rendered = try Self.render(movie: movie, voice: voice, policy: try LoudnessDuckPolicy(window: window))
            let blocks = Self.blockDepths(main: rendered.main, movie: rendered.movie)
            var count = 0
            var start = 0
            for section in Self.sections {
                count += Self.rises(blocks, in: (start + Self.depthSettling * 100)..<(start + section.seconds * 100))
                start += section.seconds * 100
            }
            counts[window] = count
            print("[measure] loudness duck, \(window) window: \(count) rises in 18 s of settled speech")
        }
        #expect(counts[.shortTerm] == 0)
        #expect((counts[.momentary] ?? 0) >= 10)
    }

    @Test("a margin that is negative, absurd or not a number is refused, naming it; what was held stays")
    func badMargins() throws {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        _ = try session.openMainStream(source: SineSource(frequency: 440, amplitude: 0.1))
        let far = try session.openStream(
            StreamDescriptor(name: "far end", role: .communication), source: SineSource(frequency: 300, amplitude: 0.1),
            owner: "party")
        let held = try session.duck(DuckRequest(owner: "party", style: .followLoudness(far.id, margin: 10)))
        let before = session.snapshot
        for margin: Float in [-1, 41, .nan, .infinity] {
            let error = #expect(throws: SessionError.self) {
                try session.duck(DuckRequest(owner: "party", style: .followLoudness(far.id, margin: margin)))
            }
            #expect(error?.code == .invalidValue)
            #expect(
                error?.message.contains("loudness duck margin (LU) \(Double(margin))") == true,
                "\(error?.message ?? "")")
            #expect(error?.message.contains("give 0 through 40 LU") == true)
        }
        #expect(session.snapshot.ducks == before.ducks)
        #expect(session.snapshot.duckFactor == before.duckFactor)
        // Following a stream that is not open is refused as for a voice-activity duck.
        let closed = far.id
        held.release()
        far.close()
        let error = #expect(throws: SessionError.self) {
            try session.duck(DuckRequest(owner: "party", style: .followLoudness(closed, margin: nil)))
        }
        #expect(error?.code == .unknownStream)
    }

    @Test("bounds reversed, a bound above 0 dB, a rate or a tolerance out of range: typed errors naming the value")
    func badPolicies() {
        func message(_ make: () throws -> LoudnessDuckPolicy) -> String {
            do {
                _ = try make()
                return "accepted"
            } catch let error as SessionError {
                #expect(error.code == .invalidValue)
                return error.message
            } catch {
                return "\(error)"
            }
        }
        let reversed = message { try LoudnessDuckPolicy(deepest: -6, shallowest: -12) }
        #expect(reversed.contains("bounds are reversed"), "\(reversed)")
        #expect(reversed.contains("-6.0"))
        #expect(message { try LoudnessDuckPolicy(shallowest: 3) }.contains("shallowest (dB) 3.0"))
        #expect(message { try LoudnessDuckPolicy(deepest: -90) }.contains("deepest (dB) -90.0"))
        #expect(message { try LoudnessDuckPolicy(margin: -3) }.contains("margin (LU) -3.0"))
        #expect(message { try LoudnessDuckPolicy(lighteningRate: 0) }.contains("lighteningRate (dB/s) 0.0"))
        #expect(message { try LoudnessDuckPolicy(deepeningRate: .nan) }.contains("deepeningRate (dB/s) nan"))
        #expect(message { try LoudnessDuckPolicy(tolerance: 10) }.contains("tolerance (LU) 10.0"))
        #expect(message { try LoudnessDuckPolicy() } == "accepted")
    }

    @Test("when the far end stops talking the movie comes back after the hold, as with a voice-activity duck")
    func releasesWhenQuiet() throws {
        let (movie, voice) = try Self.material.get()
        // Ten seconds of talk, then silence.
        var talk = voice
        for index in (10 * Self.rate * 2)..<talk.count { talk[index] = 0 }
        let rendered = try Self.render(movie: movie, voice: talk)
        let depths = Self.depths(rendered)
        let policy = VoiceActivityPolicy.default
        // Talking: down by about 19 dB. After the last word + hold + release: back at the host's volume.
        let lastWord = (0..<(10 * Self.rate)).last { abs(talk[$0 * 2]) >= policy.linearThreshold } ?? 0
        let back = lastWord + Int((policy.hold + policy.release).inSeconds * Double(Self.rate)) + 1
        let after = depths.filter { $0.frame >= back && $0.frame < 12 * Self.rate }.map(\.depth)
        let during = depths.filter { (8 * Self.rate..<lastWord).contains($0.frame) }.map(\.depth)
        #expect(during.allSatisfy { $0 < -15 }, "\(during.max() ?? 0) dB while talking")
        #expect(after.allSatisfy { abs($0) < 0.001 }, "\(after.min() ?? 0) dB after the turn")
        #expect(rendered.snapshot.loudnessDuck != nil, "still set: only released while quiet")
    }

    @Test("over natural speech in six voices and paces neither duck makes the movie rise over 1 dB once settled")
    func noPumpingOverSpeech() throws {
        // A movie that swells ±4 dB twice a second: a duck that followed its swells would pump (the
        // momentary window does: 103 rises a minute).
        let movie = try Self.scaled(Self.movieNoise(seconds: 1, swell: 4, seed: 99), to: -20)
        var totals: [String: (rises: Int, seconds: Double)] = [:]
        for voice in VoiceActivitySpeechTests.voices {
            let speech = try Speech.make(
                VoiceActivitySpeechTests.turn(for: voice), voice: voice,
                trimmedAt: VoiceActivityPolicy.default.linearThreshold)
            // 500 ms of the movie alone, the turn at −23 LUFS, then 2 s.
            let lead = Self.rate / 2
            let mono = [Float](repeating: 0, count: lead) + speech + [Float](repeating: 0, count: 2 * Self.rate)
            let levelled = try Self.scaled(speech, to: -23)
            var stereo = [Float](repeating: 0, count: mono.count * 2)
            stereo.replaceSubrange((lead * 2)..<(lead * 2 + levelled.count), with: levelled)
            let looped = (0..<(mono.count * 2)).map { movie[$0 % movie.count] }
            let talking = (lead / 480 + 3)..<((lead + speech.count) / 480)
            for style in ["fixed", "loudness"] {
                let engine = OfflineEngine()
                let session = SharedSession(engine: engine)
                let main = try session.openMainStream(source: try PCMBufferSource(samples: looped, loops: false))
                let far = try session.openStream(
                    StreamDescriptor(name: "far end", role: .communication),
                    source: try PCMBufferSource(samples: stereo, loops: false), owner: "party")
                let duck = try session.duck(
                    DuckRequest(
                        owner: "party",
                        style: style == "fixed"
                            ? .followActivity(.stream(far.id), level: nil) : .followLoudness(far.id, margin: nil)))
                var stem: [Float] = []
                while stem.count < stereo.count {
                    stem += try engine.render(frames: min(1024, (stereo.count - stem.count) / 2)).stems[main.id] ?? []
                }
                duck.release()
                let count = Self.rises(Self.blockDepths(main: stem, movie: looped), in: talking)
                totals[style, default: (0, 0)].rises += count
                totals[style, default: (0, 0)].seconds += Double(speech.count) / Double(Self.rate)
            }
        }
        let fixed = totals["fixed"]!
        let loudness = totals["loudness"]!
        print(
            "[measure] pumping over \(fixed.seconds) s of speech: fixed duck "
                + "\(Double(fixed.rises) * 60 / fixed.seconds) rises a minute, loudness duck "
                + "\(Double(loudness.rises) * 60 / loudness.seconds)"
        )
        // Absolutely, not against the fixed duck: a rise over 1 dB while someone speaks is pumping.
        #expect(loudness.rises == 0, "\(loudness.rises) rises over 1 dB in \(loudness.seconds) s of speech")
        #expect(fixed.rises == 0, "the fixed duck: \(fixed.rises) rises over 1 dB")
    }
}
