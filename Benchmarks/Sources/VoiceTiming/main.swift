// voice-timing: the measurement the voice-activity defaults are chosen from, and the pumping figure.
//
//   voice-timing [--out DIR]
//
// Makes speech with espeak-ng in several voices and paces, sends each through Opus as the far end's
// voice arrives (ffmpeg: libopus 32 kb/s, VoIP, decoded at 48 kHz), and
//  1. measures every pause the session's own voice-activity detector hears (`ActivityMeter` with the
//     default policy's threshold and no hold): the pauses inside a sentence (between words, at
//     commas) and between the sentences of one turn;
//  2. renders a conversation (two turns of the far end, a turn gap between them) on the offline engine
//     with a voice-activity duck following the far end's stream, under the old defaults and the new
//     ones, and measures how the movie pumps: how often and how far it rises while someone speaks,
//     and when it is back after the turn.
// Prints a Markdown report (and writes it to DIR/voice-timing.md with --out). Needs espeak-ng and
// ffmpeg (Scripts/install media).
import Foundation
import SharedSession

let rate = 48_000

// MARK: Material

struct Pace: Sendable {
    let name: String
    let arguments: [String]
}

struct Voice: Sendable {
    let name: String
    let turns: [[String]]
}

let english: [[String]] = [
    [
        "We should watch the second one after this, it looks really good.",
        "I made popcorn, do you want some?",
    ],
    [
        "Wait, did you see that?", "I think he knew the whole time.",
        "That is why he went back to the house.",
    ],
    [
        "Can you pause it for a minute?", "My phone is ringing, I will be right back.",
    ],
    [
        "Honestly the music in this scene is the best part.", "Turn it up a little, I can barely hear it.",
    ],
]
let voices: [Voice] = [
    Voice(name: "en-us", turns: english),
    Voice(name: "en-gb+f3", turns: english),
    Voice(name: "en-us+m3", turns: english),
    Voice(
        name: "de",
        turns: [
            ["Hast du das gesehen?", "Ich glaube, er wusste es die ganze Zeit."],
            ["Mach mal kurz Pause, bitte.", "Mein Telefon klingelt, ich bin gleich wieder da."],
        ]),
    Voice(
        name: "fr",
        turns: [
            ["Tu as vu ça?", "Je crois qu'il le savait depuis le début."],
            ["Tu peux mettre en pause une minute?", "Mon téléphone sonne, je reviens tout de suite."],
        ]),
]
let paces: [Pace] = [
    Pace(name: "100 wpm", arguments: ["-s", "100"]),
    Pace(name: "140 wpm", arguments: ["-s", "140"]),
    Pace(name: "175 wpm", arguments: ["-s", "175"]),
    Pace(name: "220 wpm", arguments: ["-s", "220"]),
    // Deliberate speech: a pause after every word, as someone who talks while watching.
    Pace(name: "140 wpm, 300 ms word gaps", arguments: ["-s", "140", "-g", "30"]),
    Pace(name: "175 wpm, 400 ms word gaps", arguments: ["-s", "175", "-g", "40"]),
]

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("voice-timing: \(message)\n".utf8))
    exit(1)
}

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("voice-timing-\(getpid())")
try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }

func run(_ command: String, _ arguments: [String]) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [command] + arguments
    process.standardOutput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    do { try process.run() } catch { fail("cannot run \(command): \(error) (Scripts/install media installs it)") }
    let message = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        fail("\(command) \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
    }
}

/// Where made speech is kept between runs (VOICE_TIMING_CACHE), if anywhere.
let cache = ProcessInfo.processInfo.environment["VOICE_TIMING_CACHE"]

/// The far end's voice saying `text`: espeak-ng, then Opus (32 kb/s, VoIP) and back, mono 48 kHz.
func speech(_ text: String, voice: String, pace: Pace) -> [Float] {
    var hash: UInt64 = 14_695_981_039_346_656_037
    for byte in "\(voice)|\(pace.arguments)|\(text)".utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
    let cached = cache.map { "\($0)/\(String(hash, radix: 16)).f32" }
    if let cached, let data = FileManager.default.contents(atPath: cached) {
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
    let wav = scratch.appendingPathComponent("s.wav").path
    let opus = scratch.appendingPathComponent("s.opus").path
    let raw = scratch.appendingPathComponent("s.f32").path
    run("espeak-ng", ["-v", voice] + pace.arguments + ["-w", wav, text])
    run(
        "ffmpeg",
        ["-loglevel", "error", "-y", "-i", wav, "-c:a", "libopus", "-b:a", "32k", "-application", "voip", opus])
    run("ffmpeg", ["-loglevel", "error", "-y", "-i", opus, "-ar", "\(rate)", "-ac", "1", "-f", "f32le", raw])
    guard let data = FileManager.default.contents(atPath: raw) else { fail("no audio from ffmpeg") }
    if let cached { _ = FileManager.default.createFile(atPath: cached, contents: data) }
    return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
}

// MARK: Pauses, heard by the session's detector

/// The active stretches of `samples` (frames), as the session's `ActivityMeter` hears them with the
/// default threshold and no hold, in 1 ms blocks.
func activeStretches(_ samples: [Float], threshold: Float) -> [Range<Int>] {
    let meter = ActivityMeter()
    meter.configure(threshold: threshold, holdFrames: 0)
    var stretches: [Range<Int>] = []
    let block = rate / 1000
    samples.withUnsafeBufferPointer { buffer in
        var offset = 0
        while offset < buffer.count {
            let frames = min(block, buffer.count - offset)
            meter.measure(buffer.baseAddress! + offset, frames: frames, channels: 1)
            let span = meter.activeSpan()
            if span.end > span.start {
                let range = (offset + span.start)..<(offset + span.end)
                if let last = stretches.last, last.upperBound >= range.lowerBound {
                    stretches[stretches.count - 1] = last.lowerBound..<range.upperBound
                } else {
                    stretches.append(range)
                }
            }
            offset += frames
        }
    }
    return stretches
}

/// The pauses between active stretches, in frames, with where each starts.
func pauses(_ stretches: [Range<Int>]) -> [(start: Int, length: Int)] {
    zip(stretches, stretches.dropFirst()).map { ($0.upperBound, $1.lowerBound - $0.upperBound) }
}

struct PauseSet {
    var within: [Double] = []
    var between: [Double] = []
}

let threshold = VoiceActivityPolicy.default.linearThreshold
var measured = PauseSet()
var perPace: [String: PauseSet] = [:]
var turnsAudio: [(voice: String, pace: String, turns: [[Float]])] = []
// Pauses shorter than this are the detector's own (a plosive's closure, a zero of the waveform).
let shortest = rate / 100

for voice in voices {
    for pace in paces {
        var audio: [[Float]] = []
        for turn in voice.turns {
            // Each sentence alone: its inner pauses are within-sentence pauses, and its active length
            // places the sentence boundaries in the whole turn.
            let alone = turn.map { activeStretches(speech($0, voice: voice.name, pace: pace), threshold: threshold) }
            let whole = speech(turn.joined(separator: " "), voice: voice.name, pace: pace)
            let stretches = activeStretches(whole, threshold: threshold)
            let gaps = pauses(stretches).filter { $0.length >= shortest }
            var boundaries: [Int] = []
            var expected = stretches.first?.lowerBound ?? 0
            for sentence in alone.dropLast() {
                expected += (sentence.last?.upperBound ?? 0) - (sentence.first?.lowerBound ?? 0)
                let candidates = gaps.indices.filter { !boundaries.contains($0) }
                guard
                    let nearest = candidates.min(by: { abs(gaps[$0].start - expected) < abs(gaps[$1].start - expected) }
                    )
                else { fail("no sentence boundary found in \(voice.name), \(pace.name)") }
                boundaries.append(nearest)
                expected = gaps[nearest].start + gaps[nearest].length
            }
            for (index, gap) in gaps.enumerated() {
                let milliseconds = Double(gap.length) * 1000 / Double(rate)
                if boundaries.contains(index) {
                    measured.between.append(milliseconds)
                    perPace[pace.name, default: PauseSet()].between.append(milliseconds)
                } else {
                    measured.within.append(milliseconds)
                    perPace[pace.name, default: PauseSet()].within.append(milliseconds)
                }
            }
            // The turn as the far end says it, from its first word to its last.
            let first = stretches.first?.lowerBound ?? 0
            let last = stretches.last?.upperBound ?? whole.count
            audio.append(Array(whole[first..<last]))
        }
        turnsAudio.append((voice.name, pace.name, audio))
    }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))
    return sorted[index]
}

func summary(_ values: [Double]) -> String {
    String(
        format: "%d | %.0f | %.0f | %.0f | %.0f | %.0f", values.count, percentile(values, 50), percentile(values, 90),
        percentile(values, 99), values.max() ?? .nan,
        values.count > 0 ? values.reduce(0, +) / Double(values.count) : .nan)
}

// MARK: Pumping: the movie under a duck that follows the far end

/// The gap between the two turns of the rendered conversation: the shortest silence that counts as
/// the end of a turn (see the report's choice).
let turnGap = 2.0

struct Pumping {
    var speechSeconds = 0.0
    var rises = 0
    var riseHeights: [Double] = []  // dB above the ducked level, the top of each rise
    var highest = -Double.infinity  // dB re the movie's level, reached while someone speaks
    var worstBack = 0.0  // ms from the turn's last word to the movie back within 0.1 dB
    var backInGap = 0
    var gaps = 0
}

func decibels(_ value: Double) -> Double { 20 * log10(max(value, 1e-12)) }

@MainActor func pumping(policy: VoiceActivityPolicy) -> Pumping {
    var result = Pumping()
    let full: Float = 0.5
    for conversation in turnsAudio {
        for pair in stride(from: 0, to: conversation.turns.count - 1, by: 2) {
            let turns = [conversation.turns[pair], conversation.turns[pair + 1]]
            let lead = rate
            let gap = Int(turnGap * Double(rate))
            let tail = rate * 3
            var mono = [Float](repeating: 0, count: lead)
            let firstStart = mono.count
            mono += turns[0]
            let firstEnd = mono.count
            mono += [Float](repeating: 0, count: gap)
            let secondStart = mono.count
            mono += turns[1]
            let secondEnd = mono.count
            mono += [Float](repeating: 0, count: tail)
            let stereo = mono.flatMap { [$0, $0] }
            do {
                let engine = OfflineEngine()
                let session = SharedSession(
                    engine: engine, policy: try SessionPolicy(voiceActivity: policy))
                let main = try session.openMainStream(source: try PCMBufferSource(samples: [full, full], loops: true))
                let voice = try session.openStream(
                    StreamDescriptor(name: "far end", role: .communication),
                    source: try PCMBufferSource(samples: stereo, loops: false), owner: "watch-party")
                let duck = try session.duck(
                    DuckRequest(owner: "watch-party", style: .followActivity(.stream(voice.id), level: nil)))
                var stem: [Float] = []
                stem.reserveCapacity(stereo.count)
                while stem.count < stereo.count {
                    let frames = min(1024, (stereo.count - stem.count) / 2)
                    stem += try engine.render(frames: frames).stems[main.id] ?? []
                }
                duck.release()
                let ducked = Double(full) * Double(session.policy.duckLevel)
                let gain = stride(from: 0, to: stem.count, by: 2).map { Double(stem[$0]) }
                // While someone speaks: from the first word plus the attack to the last word.
                let settle = Int(Double(rate) * Double(policy.attack.components.attoseconds) / 1e18) + rate / 100
                for (start, end) in [(firstStart, firstEnd), (secondStart, secondEnd)] {
                    result.speechSeconds += Double(end - start) / Double(rate)
                    var rising = false
                    for frame in (start + settle)..<end {
                        let above = decibels(gain[frame] / ducked)
                        if above > 1, !rising {
                            result.rises += 1
                            result.riseHeights.append(above)
                        }
                        if above > 1 {
                            result.riseHeights[result.riseHeights.count - 1] = max(result.riseHeights.last!, above)
                        }
                        rising = above > 1
                        result.highest = max(result.highest, decibels(gain[frame] / Double(full)))
                    }
                    // Back: the first frame after the turn from which the movie stays at its level.
                    let limit = Double(full) * pow(10, -0.1 / 20)
                    let horizon = end == firstEnd ? secondStart : gain.count
                    var back = end
                    for frame in end..<horizon where gain[frame] < limit { back = frame + 1 }
                    let backMilliseconds = Double(back - end) * 1000 / Double(rate)
                    result.worstBack = max(result.worstBack, backMilliseconds)
                    if end == firstEnd {
                        result.gaps += 1
                        if back < secondStart { result.backInGap += 1 }
                    }
                }
            } catch {
                fail("rendering failed: \(error)")
            }
        }
    }
    return result
}

let old = try VoiceActivityPolicy(
    threshold: -40, attack: .milliseconds(20), hold: .milliseconds(300),
    release: .milliseconds(400))
let new = VoiceActivityPolicy.default
let before = pumping(policy: old)
let after = pumping(policy: new)

func milliseconds(_ duration: Duration) -> Int {
    Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
}

// MARK: Report

var report = """
    Speech made with espeak-ng (voices \(voices.map(\.name).joined(separator: ", ")); paces \
    \(paces.map(\.name).joined(separator: "; "))), each utterance through Opus (libopus 32 kb/s, VoIP) and \
    decoded at 48 kHz, as the far end's voice arrives. Pauses are what the session's detector hears \
    (`ActivityMeter`, threshold \(VoiceActivityPolicy.default.threshold) dBFS peak, no hold, 1 ms blocks), \
    10 ms and longer; a sentence boundary is placed from the sentence's own length when said alone.

    | pauses | count | median ms | p90 ms | p99 ms | longest ms | mean ms |
    | --- | ---: | ---: | ---: | ---: | ---: | ---: |
    | within a sentence (between words, commas) | \(summary(measured.within)) |
    | between the sentences of a turn | \(summary(measured.between)) |
    | between turns (chosen) | — | \(Int(turnGap * 1000)) or more | | | | |

    | pace | within: median / longest ms | between sentences: median / longest ms |
    | --- | ---: | ---: |

    """
for pace in paces {
    let set = perPace[pace.name] ?? PauseSet()
    report += String(
        format: "| %@ | %.0f / %.0f | %.0f / %.0f |\n", pace.name, percentile(set.within, 50), set.within.max() ?? .nan,
        percentile(set.between, 50), set.between.max() ?? .nan)
}
func row(_ name: String, _ policy: VoiceActivityPolicy, _ p: Pumping) -> String {
    String(
        format: "| %@ (hold %d ms, release %d ms) | %.1f | %d | %.1f | %@ | %.1f | %.0f | %d of %d |\n", name,
        milliseconds(policy.hold), milliseconds(policy.release), p.speechSeconds, p.rises,
        Double(p.rises) * 60 / p.speechSeconds,
        p.riseHeights.isEmpty ? "—" : String(format: "%.1f", percentile(p.riseHeights, 50)), p.highest, p.worstBack,
        p.backInGap, p.gaps)
}
report += """

    Pumping: each voice and pace says two turns with a \(turnGap) s turn gap between them, rendered on the \
    offline engine with the movie (a constant) ducked by `.followActivity` on the far end's stream \
    (duck level −20 dB). A rise is the movie going more than 1 dB above the ducked level between the \
    first word (plus the attack) and the last word of a turn; “highest” is the movie's highest level \
    there, in dB re its own level (0 dB: not ducked at all); “back” is from the turn's last word to the \
    movie staying within 0.1 dB of its level.

    | defaults | speech s | rises | rises per minute | median rise, dB above the duck | highest dB | back, longest ms | back within the turn gap |
    | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |

    """
report += row("before", old, before)
report += row("after", new, after)
print(report)
let arguments = CommandLine.arguments
if let index = arguments.firstIndex(of: "--out"), index + 1 < arguments.count {
    let url = URL(fileURLWithPath: arguments[index + 1]).appendingPathComponent("voice-timing.md")
    do { try report.write(to: url, atomically: true, encoding: .utf8) } catch { fail("cannot write \(url.path)") }
}
