import Foundation
import Logging
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// Random sequences of every kind of call a host, its units, the platform and the engine make, each
/// step checked against ``SessionModel``, an independent statement of the rules: the events the
/// session emitted, every call it made on the engine, the engine's state and the whole snapshot.
/// Time is a manual clock, so deadlines fall due where a step moves it on, never after a sleep.
///
/// Steps are generated only where they apply (a release only with a lease to release), so every
/// step of every sequence runs: the test counts them and requires all. A failing sequence is
/// shrunk (whole steps removed while it still fails) and printed, step by step, as a minimal
/// reproduction with its seed.
///
/// `SHAREDSESSION_MODEL_SEQUENCES` sets how many sequences run (default ``defaultSequences``, about
/// a minute in a debug build beside the rest of the suite); `SHAREDSESSION_MODEL_SEED` the first
/// seed.
@Suite("Model-based")
struct ModelBasedTests {
    /// How many sequences run without `SHAREDSESSION_MODEL_SEQUENCES`: about a minute of the core pass
    /// of `Scripts/test` (a debug build, beside the other suites), measured at 4.3 ms a sequence on a
    /// quiet 2-core machine and 13 ms with the load at 10. Under ThreadSanitizer, which slows this
    /// single-threaded test several times and finds nothing in it, a sample.
    #if SHAREDSESSION_TSAN
        static let defaultSequences = 500
    #else
        static let defaultSequences = 10000
    #endif
    static let length = 60

    static var sequences: Int {
        sequences(
            requested: ProcessInfo.processInfo.environment["SHAREDSESSION_MODEL_SEQUENCES"], required: Requirements.all)
    }

    /// The count to run for a requested `SHAREDSESSION_MODEL_SEQUENCES`: the default without one; where every
    /// test must run (CI), never fewer than the default, whatever the environment inherited.
    static func sequences(requested: String?, required: Bool) -> Int {
        let count = requested.flatMap { Int($0.filter { $0 != " " }) } ?? defaultSequences
        return required ? max(count, defaultSequences) : max(count, 1)
    }

    static var firstSeed: UInt64 {
        ProcessInfo.processInfo.environment["SHAREDSESSION_MODEL_SEED"].flatMap(UInt64.init) ?? 1
    }

    @Test("random sequences of 60 calls and events match the reference model after every step")
    func randomSequencesMatchModel() throws {
        let count = Self.sequences
        let clock = ContinuousClock()
        let start = clock.now
        var steps = 0
        for seed in Self.firstSeed..<(Self.firstSeed + UInt64(count)) {
            var random = SplitMix64(state: seed)
            let runner = Runner(policy: Self.policy(seed: seed))
            var sequence: [Step] = []
            for _ in 0..<Self.length {
                let step = runner.generate(&random)
                sequence.append(step)
                switch runner.run(step) {
                case .matched: steps += 1
                case .invalid(let why):
                    Issue.record("seed \(seed): generated a step that does not apply: \(step) (\(why))")
                    return
                case .mismatched(let what):
                    let minimal = Self.shrink(sequence, policy: Self.policy(seed: seed))
                    Issue.record(
                        """
                        seed \(seed): the session and the model differ after \(sequence.count) steps: \(what)
                        minimal sequence (\(minimal.steps.count) step(s), policy \(Self.policyName(seed: seed))):
                        \(minimal.steps.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n"))
                        differs at its last step: \(minimal.failure)
                        """)
                    return
                }
            }
        }
        let elapsed = clock.now - start
        print("model-based: \(count) sequences, \(steps) steps run and checked in \(elapsed)")
        #expect(steps == count * Self.length, "every generated step runs: none skipped")
    }

    // MARK: Policies

    /// The units and their limits: one unlimited, one granted within its limits, one refused beyond
    /// them, one whose ducks are all held for half a second at most.
    static let owners = ["free", "feed", "strict", "timed"]

    static let limits: [String: UnitLimits] = [
        "feed": try! UnitLimits(deepestDuckLevel: 0.25, mayPauseMain: false),
        "strict": try! UnitLimits(deepestDuckLevel: 0.3, mayPauseMain: false, mayTakeVoice: false, excess: .refuse),
        "timed": try! UnitLimits(mayTakeVoice: false, maximumHold: .milliseconds(500)),
    ]

    static func policyName(seed: UInt64) -> String {
        ["default timings with unit limits", "other audio ducks, suspended in background", "ambient generic"][
            Int(seed % 3)]
    }

    /// Three policies in turn, so the rules that depend on the policy are exercised both ways.
    static func policy(seed: UInt64) -> SessionPolicy {
        switch seed % 3 {
        case 0: try! SessionPolicy(unitLimits: limits)
        case 1:
            try! SessionPolicy(
                duckLevel: 0.2, suspendInBackground: true, duckWhenOtherAudioPlays: true, unitLimits: limits,
                defaultUnitLimits: try! UnitLimits(deepestDuckLevel: 0.05))
        default:
            try! SessionPolicy(
                genericConfiguration: try! SessionConfiguration(category: .ambient), duckLevel: 0.15,
                fadeDown: .milliseconds(80), fadeUp: .milliseconds(250), notifyOthersOnDeactivation: false,
                unitLimits: limits)
        }
    }

    // MARK: Shrinking

    /// Removes steps from a failing sequence while it still fails (halves, then quarters, down to single
    /// steps), keeping only candidates whose every step still applies; returns the shortest found and
    /// how it fails.
    static func shrink(_ sequence: [Step], policy: SessionPolicy) -> (steps: [Step], failure: String) {
        func failure(_ steps: [Step]) -> String? {
            let runner = Runner(policy: policy)
            for step in steps {
                switch runner.run(step) {
                case .matched: continue
                case .invalid: return nil
                case .mismatched(let what): return what
                }
            }
            return nil
        }
        var current = sequence
        var message = failure(current) ?? "(the sequence passed when run again: not reproducible)"
        var changed = true
        while changed {
            changed = false
            // Remove steps: halves, then quarters, down to single steps.
            var chunk = max(current.count / 2, 1)
            while chunk >= 1 {
                var start = 0
                while start < current.count {
                    var candidate = current
                    candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                    if let what = failure(candidate) {
                        current = candidate
                        message = what
                        changed = true
                    } else {
                        start += chunk
                    }
                }
                chunk = chunk == 1 ? 0 : chunk / 2
            }
            // Simplify what is left: no hold, the policy's level, the unlimited unit, plain streams.
            for index in current.indices {
                for simpler in current[index].simpler {
                    var candidate = current
                    candidate[index] = simpler
                    if let what = failure(candidate) {
                        current = candidate
                        message = what
                        changed = true
                        break
                    }
                }
            }
        }
        // Cut what follows the first failing step.
        let runner = Runner(policy: policy)
        for (index, step) in current.enumerated() {
            if case .mismatched = runner.run(step) { return (Array(current[...index]), message) }
        }
        return (current, message)
    }
}

/// A reproducible generator, so a failure names the seed that replays it.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One step of a sequence. Handles are named by their place in the runner's lists (the n-th lease
/// held, the n-th overlay open), so a shrunk sequence still reads as calls; a step whose place no
/// longer exists does not apply, and a shrink candidate with such a step is not considered.
enum Step: Hashable, CustomStringConvertible {
    case acquire(AudioSessionType, owner: String)
    case releaseLease(Int)
    case dropLease(Int)
    case releaseLeaseAgain(Int)
    case duck(owner: String, level: Float?, holdMilliseconds: Int?)
    case pauseMain(owner: String, holdMilliseconds: Int?)
    /// A voice-activity duck following the voice input (`overlay` nil) or the n-th open overlay.
    case followActivity(owner: String, overlay: Int?, level: Float?, holdMilliseconds: Int?)
    /// A voice-activity duck following the n-th stream closed: refused.
    case followClosedStream(owner: String, Int)
    case invalidDuckLevel(owner: String, Float)
    case releaseDuck(Int)
    case dropDuck(Int)
    case releaseDuckAgain(Int)
    case setMainVolume(Float)
    case invalidMainVolume(Float)
    case play
    case pause
    case suspend(renderAnyway: Bool)
    case wake
    case system(SystemEvent)
    /// The clock moves on, and the deadlines due are released.
    case advance(milliseconds: Int)
    case openMain(backgroundMusic: Bool, exempt: Bool)
    case closeMain
    case openOverlay(owner: String?, volume: Float, backgroundMusic: Bool)
    case closeOverlay(Int)
    case setOverlayVolume(Int, Float)
    case setClosedStreamVolume(Int)
    case connectionLost
    case reconnected(attempts: Int)
    case quantumChanged(Int)
    /// The main stream's (`overlay` nil) or the n-th overlay's output latency changed to `milliseconds`.
    case outputLatency(overlay: Int?, milliseconds: Int)
    /// A fault on the main stream (`overlay` nil) or the n-th overlay.
    case streamFault(overlay: Int?)
    /// A volume set from outside on the main stream (`overlay` nil) or the n-th overlay.
    case externalVolume(overlay: Int?, Float)
    case close

    /// Simpler forms of the step, tried by the shrinking: without a hold, at the policy's level, by the
    /// unlimited unit, on a plain stream.
    var simpler: [Step] {
        switch self {
        case .acquire(let type, let owner):
            [.acquire(.generic, owner: owner), .acquire(type, owner: "free")].filter { $0 != self }
        case .duck(let owner, let level, let hold):
            [
                .duck(owner: owner, level: level, holdMilliseconds: nil),
                .duck(owner: owner, level: nil, holdMilliseconds: hold),
                .duck(owner: "free", level: level, holdMilliseconds: hold),
            ].filter { $0 != self }
        case .pauseMain(let owner, let hold):
            [.pauseMain(owner: owner, holdMilliseconds: nil), .pauseMain(owner: "free", holdMilliseconds: hold)]
                .filter { $0 != self }
        case .followActivity(let owner, let overlay, let level, let hold):
            [
                .followActivity(owner: owner, overlay: overlay, level: level, holdMilliseconds: nil),
                .followActivity(owner: owner, overlay: overlay, level: nil, holdMilliseconds: hold),
                .followActivity(owner: "free", overlay: overlay, level: level, holdMilliseconds: hold),
                .followActivity(owner: owner, overlay: nil, level: level, holdMilliseconds: hold),
            ].filter { $0 != self }
        case .openMain(let music, let exempt):
            [.openMain(backgroundMusic: false, exempt: exempt), .openMain(backgroundMusic: music, exempt: false)]
                .filter { $0 != self }
        case .openOverlay(let owner, let volume, let music):
            [
                .openOverlay(owner: nil, volume: volume, backgroundMusic: music),
                .openOverlay(owner: owner, volume: 1, backgroundMusic: music),
                .openOverlay(owner: owner, volume: volume, backgroundMusic: false),
            ].filter { $0 != self }
        case .setMainVolume(let volume): volume == 0.5 ? [] : [.setMainVolume(0.5)]
        case .dropLease(let n): [.releaseLease(n)]
        case .dropDuck(let n): [.releaseDuck(n)]
        default: []
        }
    }

    var description: String {
        switch self {
        case .acquire(let type, let owner): "acquire(.\(type), owner: \"\(owner)\")"
        case .releaseLease(let n): "release lease #\(n)"
        case .dropLease(let n): "drop lease #\(n)"
        case .releaseLeaseAgain(let n): "release released lease #\(n) again"
        case .duck(let owner, let level, let hold):
            "duck(owner: \"\(owner)\", level: \(level.map { "\($0)" } ?? "nil"), hold: \(hold.map { "\($0) ms" } ?? "nil"))"
        case .pauseMain(let owner, let hold):
            "pauseMain(owner: \"\(owner)\", hold: \(hold.map { "\($0) ms" } ?? "nil"))"
        case .followActivity(let owner, let overlay, let level, let hold):
            "followActivity(owner: \"\(owner)\", of: \(overlay.map { "overlay #\($0)" } ?? "voice input"), "
                + "level: \(level.map { "\($0)" } ?? "nil"), hold: \(hold.map { "\($0) ms" } ?? "nil"))"
        case .followClosedStream(let owner, let n): "followActivity(owner: \"\(owner)\", of: closed stream #\(n))"
        case .invalidDuckLevel(let owner, let level): "duck(owner: \"\(owner)\", level: \(level)) (invalid)"
        case .releaseDuck(let n): "release duck #\(n)"
        case .dropDuck(let n): "drop duck #\(n)"
        case .releaseDuckAgain(let n): "release released duck #\(n) again"
        case .setMainVolume(let volume): "mainVolume = \(volume)"
        case .invalidMainVolume(let volume): "mainVolume = \(volume) (invalid)"
        case .play: "play()"
        case .pause: "pause()"
        case .suspend(let anyway): "suspend(renderAnyway: \(anyway))"
        case .wake: "wakeFromSuspend()"
        case .system(let event): "handle(\(event))"
        case .advance(let ms): "clock + \(ms) ms, deadlines due released"
        case .openMain(let music, let exempt): "openMainStream(backgroundMusic: \(music), exempt: \(exempt))"
        case .closeMain: "close main stream"
        case .openOverlay(let owner, let volume, let music):
            "openStream(owner: \(owner.map { "\"\($0)\"" } ?? "nil"), volume: \(volume), backgroundMusic: \(music))"
        case .closeOverlay(let n): "close overlay #\(n)"
        case .setOverlayVolume(let n, let volume): "overlay #\(n) volume = \(volume)"
        case .setClosedStreamVolume(let n): "closed stream #\(n) volume = 0.5 (not open)"
        case .connectionLost: "engine: connectionLost"
        case .reconnected(let attempts): "engine: reconnected(attempts: \(attempts))"
        case .quantumChanged(let frames): "engine: quantumChanged(\(frames))"
        case .outputLatency(let overlay, let milliseconds):
            "engine: outputLatency(\(overlay.map { "overlay #\($0)" } ?? "main"), \(milliseconds) ms)"
        case .streamFault(let overlay): "engine: streamFault(\(overlay.map { "overlay #\($0)" } ?? "main"))"
        case .externalVolume(let overlay, let volume):
            "engine: externalVolumeChange(\(overlay.map { "overlay #\($0)" } ?? "main"), \(volume))"
        case .close: "session.close()"
        }
    }
}
