import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// The default voice-activity timing against real speech: espeak-ng turns in several voices and paces,
/// through Opus as a far end's voice arrives, followed by a voice-activity duck on the offline engine.
/// The main stream is a constant, so its stem is the gain the duck applied, sample by sample.
@Suite("Voice-activity timing on speech")
struct VoiceActivitySpeechTests {
    static let full: Float = 0.5
    static let rate = 48

    /// Voices and paces: ordinary speech slow and fast, and deliberate speech with a pause after every
    /// word (the 390–460 ms pauses that made the old 300 ms hold pump).
    static let voices: [Speech.Voice] = [
        .init("en-us", ["-s", "100"]), .init("en-gb+f3", ["-s", "175"]), .init("en-us+m3", ["-s", "220"]),
        .init("en-us", ["-s", "140", "-g", "30"]), .init("de", ["-s", "175", "-g", "40"]),
        .init("fr", ["-s", "140"]),
    ]

    static func turn(for voice: Speech.Voice) -> String {
        switch voice.voice {
        case "de": "Hast du das gesehen? Ich glaube, er wusste es die ganze Zeit."
        case "fr": "Tu peux mettre en pause une minute? Mon téléphone sonne, je reviens tout de suite."
        default: "Wait, did you see that? I think he knew the whole time. That is why he went back to the house."
        }
    }

    @Test(
        "speech in several voices and paces: the movie stays down between the words and sentences of a turn, and is back within hold + release after it",
        arguments: voices)
    func movieStaysDownThroughATurn(voice: Speech.Voice) throws {
        let policy = VoiceActivityPolicy.default
        let (speech, gain, ducked) = try Self.duckedTurn(voice, policy: policy)
        let lead = 500 * Self.rate

        // While the turn goes on: from its first word plus the attack to its last word.
        let rise = Self.rise(speech: speech, gain: gain, ducked: ducked, policy: policy)
        // After the last word: held for the hold, then back at the movie's level within the release.
        let end = lead + speech.count
        let held = end..<(end + Int(policy.hold.inSeconds * 48_000) - 48)
        let heldRise = held.map { LevelMeter.decibels(gain[$0] / ducked) }.max() ?? .infinity
        let back = (end + Int((policy.hold + policy.release).inSeconds * 48_000) + 1)..<gain.count
        let backLevel = back.map { abs(LevelMeter.decibels(gain[$0])) }.max() ?? .infinity
        print(
            "[measure] speech \(voice): \(speech.count / Self.rate) ms turn; the movie rose \(rise) dB above the duck "
                + "while it went on, \(heldRise) dB during the hold; \(backLevel) dB off its level after hold + release"
        )
        #expect(rise < 0.1, "the movie rises between the words of a turn (\(voice)): pumping")
        #expect(heldRise < 0.1, "the movie comes back before the hold is over (\(voice))")
        #expect(backLevel < 0.1, "the movie is not back at its level after the turn (\(voice))")
    }

    /// The claim behind the 1.2 s default (CHANGELOG, BENCHMARKS.md §8): with the old 300 ms hold the
    /// movie rises above the duck between the words of a turn, in five of these six voices and paces.
    @Test("the old 300 ms hold lets the movie rise between the words of a turn: five of the six voices pump")
    func oldHoldPumps() throws {
        let old = try VoiceActivityPolicy(hold: .milliseconds(300))
        var pumped: [String] = []
        for voice in Self.voices {
            let (speech, gain, ducked) = try Self.duckedTurn(voice, policy: old)
            let rise = Self.rise(speech: speech, gain: gain, ducked: ducked, policy: old)
            print("[measure] speech \(voice), hold 300 ms: the movie rose \(rise) dB above the duck within the turn")
            if rise > 1 { pumped.append("\(voice)") }
        }
        #expect(pumped.count == 5, "pumped: \(pumped)")
    }

    /// How far the movie rose above the duck, in dB, from the turn's first word plus the attack to its
    /// last word.
    static func rise(speech: [Float], gain: [Double], ducked: Double, policy: VoiceActivityPolicy) -> Double {
        let lead = 500 * Self.rate
        let attack = Int(policy.attack.inSeconds * 48_000) + 1
        let talking = (lead + attack)..<(lead + speech.count)
        return talking.map { LevelMeter.decibels(gain[$0] / ducked) }.max() ?? .infinity
    }

    /// Renders one turn of `voice` as the far end, ducking a constant movie by its voice activity under
    /// `policy`: the speech, the movie's gain sample by sample, and the duck level.
    static func duckedTurn(_ voice: Speech.Voice, policy: VoiceActivityPolicy) throws -> (
        speech: [Float], gain: [Double], ducked: Double
    ) {
        let speech = try Speech.make(Self.turn(for: voice), voice: voice, trimmedAt: policy.linearThreshold)
        // 500 ms of the movie alone, the turn, then the shortest turn gap the defaults were chosen for (2 s).
        let lead = 500 * Self.rate
        let gap = 2000 * Self.rate
        let mono = [Float](repeating: 0, count: lead) + speech + [Float](repeating: 0, count: gap)
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine, policy: try SessionPolicy(voiceActivity: policy))
        let main = try session.openMainStream(
            source: try PCMBufferSource(samples: [Self.full, Self.full], loops: true))
        let farEnd = try session.openStream(
            StreamDescriptor(name: "far end", role: .communication),
            source: try PCMBufferSource(samples: mono.flatMap { [$0, $0] }, loops: false), owner: "party")
        let duck = try session.duck(
            DuckRequest(owner: "party", style: .followActivity(.stream(farEnd.id), level: nil)))
        defer { duck.release() }
        var stem: [Float] = []
        while stem.count < mono.count * 2 {
            stem += try engine.render(frames: min(1024, mono.count - stem.count / 2)).stems[main.id] ?? []
        }
        let gain = stride(from: 0, to: stem.count, by: 2).map { Double(stem[$0]) / Double(Self.full) }
        return (speech, gain, Double(session.policy.duckLevel))
    }
}
