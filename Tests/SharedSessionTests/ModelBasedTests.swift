import SharedSession
import SharedSessionTesting
import Testing

/// Thousands of random sequences of every kind of call, each step checked against a small reference
/// model that counts instead of keeping lists: a different derivation of the same rules.
@Suite("Model-based")
struct ModelBasedTests {
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

    struct Model {
        var generic = 0
        var voice = 0
        var duckLevels: [LeaseID: Float] = [:]
        var pauses = 0
        var volume: Float = 1
        var wantsPlay = true
        var override = false
        var interrupted = false
        /// An interruption ended without shouldResume and the host has not played since (semantics 16:
        /// a later interruption ending with shouldResume does not lift it).
        var waiting = false
        var background = false
        var manual: Bool?
        var other = false

        var configuration: SessionConfiguration? { voice > 0 ? .voice : generic > 0 ? .generic : nil }
        var duckFactor: Float { duckLevels.values.min().map { min($0, 1) } ?? 1 }
        var interruption: InterruptionPhase { interrupted ? .interrupted : waiting ? .endedWaitingForHost : .none }
        var paused: Bool { !wantsPlay || (pauses > 0 && !override) || waiting }
        var suspended: Bool {
            interrupted || manual == false || (background && configuration == nil)
        }
        var backgroundMusicMuted: Bool { other && (configuration ?? .generic).mixesWithOthers }
        var mainGain: Float { manual == true ? 0 : volume * duckFactor }
    }

    @Test("2000 random sequences of 60 calls match the reference model after every step")
    func randomSequencesMatchModel() throws {
        var steps = 0
        for seed in UInt64(1)...2000 {
            steps += try run(seed: seed, length: 60)
        }
        print("model-based: 2000 sequences, \(steps) steps checked")
    }

    private func run(seed: UInt64, length: Int) throws -> Int {
        var random = SplitMix64(state: seed)
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(
            StreamDescriptor(name: "main", role: .movie), source: try SineSource(frequency: 440, amplitude: 0.5))
        var model = Model()
        var leases: [SessionLease] = []
        var released: [SessionLease] = []
        var ducks: [DuckLease] = []
        var trace: [String] = []

        for step in 0..<length {
            let operation = Int.random(in: 0..<23, using: &random)
            switch operation {
            case 0, 1:
                let type: AudioSessionType = operation == 0 ? .generic : .voice
                leases.append(try session.acquire(type, owner: "unit-\(step % 3)"))
                if type == .generic { model.generic += 1 } else { model.voice += 1 }
                trace.append("acquire(\(type))")
            case 2, 4:
                guard !leases.isEmpty else { continue }
                let lease = leases.remove(at: Int.random(in: 0..<leases.count, using: &random))
                if lease.type == .generic { model.generic -= 1 } else { model.voice -= 1 }
                if operation == 2 {
                    lease.release()
                    released.append(lease)
                    trace.append("release(\(lease.type))")
                } else {
                    trace.append("drop(\(lease.type))")
                }
            case 3:
                guard let lease = released.randomElement(using: &random) else { continue }
                lease.release()
                trace.append("release again(\(lease.type))")
            case 5, 6:
                let level: Float? = operation == 6 ? Float.random(in: 0...1, using: &random) : nil
                let duck = try level.map { try session.duck(owner: "unit", level: $0) } ?? session.duck(owner: "unit")
                ducks.append(duck)
                model.duckLevels[duck.id] = level ?? 0.1
                trace.append("duck(\(level.map { "\($0)" } ?? "default"))")
            case 7:
                ducks.append(session.pauseMain(owner: "unit"))
                model.pauses += 1
                model.override = false
                trace.append("pauseMain")
            case 8:
                guard !ducks.isEmpty else { continue }
                let duck = ducks.remove(at: Int.random(in: 0..<ducks.count, using: &random))
                duck.release()
                if duck.style == .pause {
                    model.pauses -= 1
                    if model.pauses == 0 { model.override = false }
                } else {
                    model.duckLevels[duck.id] = nil
                }
                trace.append("release(\(duck.style))")
            case 9:
                let volume = Float.random(in: 0...1, using: &random)
                try session.setMainVolume(volume)
                model.volume = volume
                trace.append("volume(\(volume))")
            case 10:
                let bad: Float = [Float.nan, -0.5, 2, .infinity].randomElement(using: &random)!
                #expect(throws: SessionError.self) { try session.setMainVolume(bad) }
                trace.append("volume(\(bad)) refused")
            case 11:
                session.play()
                model.wantsPlay = true
                if model.pauses > 0 { model.override = true }
                model.interrupted = false
                model.waiting = false
                trace.append("play")
            case 12:
                session.pause()
                model.wantsPlay = false
                trace.append("pause")
            case 13:
                session.handle(.interruptionBegan)
                model.interrupted = true
                trace.append("interruptionBegan")
            case 14, 15:
                let resume = operation == 14
                session.handle(.interruptionEnded(shouldResume: resume))
                if model.interrupted {
                    model.interrupted = false
                    if !resume { model.waiting = true }
                }
                trace.append("interruptionEnded(\(resume))")
            case 16:
                session.handle(.didEnterBackground)
                model.background = true
                trace.append("background")
            case 17:
                session.handle(.willEnterForeground)
                model.background = false
                model.interrupted = false
                trace.append("foreground")
            case 18, 19:
                session.handle(operation == 18 ? .otherAudioStarted : .otherAudioStopped)
                model.other = operation == 18
                trace.append(operation == 18 ? "otherStarted" : "otherStopped")
            case 20:
                let anyway = Bool.random(using: &random)
                session.suspend(renderAnyway: anyway)
                model.manual = anyway
                trace.append("suspend(renderAnyway: \(anyway))")
            case 21:
                session.wakeFromSuspend()
                model.manual = nil
                trace.append("wake")
            default:
                session.handle(.routeChanged(RouteChange(reason: .oldDeviceUnavailable)))
                model.wantsPlay = false
                trace.append("route oldDeviceUnavailable")
            }

            let snapshot = session.snapshot
            let context = Comment(rawValue: "seed \(seed) step \(step): \(trace.joined(separator: ", "))")
            #expect(snapshot.activeConfiguration == model.configuration, context)
            #expect(engine.activeConfiguration == model.configuration, context)
            #expect(engine.isCapturing == (model.voice > 0), context)
            #expect(snapshot.genericCount == model.generic && snapshot.voiceCount == model.voice, context)
            #expect(snapshot.duckFactor == model.duckFactor, context)
            #expect(snapshot.mainVolume == model.volume, context)
            #expect(snapshot.mainGain == model.mainGain, context)
            #expect(engine.gains[main.id] == model.mainGain, context)
            #expect(snapshot.isMainPaused == model.paused, context)
            #expect(engine.paused[main.id] == model.paused, context)
            #expect(snapshot.interruption == model.interruption, context)
            #expect(snapshot.isSuspended == model.suspended, context)
            #expect(engine.isSuspended == model.suspended, context)
            #expect(snapshot.isBackgroundMusicMuted == model.backgroundMusicMuted, context)
            #expect(snapshot.secondaryAudioShouldBeSilencedHint == model.other, context)
            #expect(snapshot.ducks.count == model.duckLevels.count + model.pauses, context)
            if snapshot.activeConfiguration != model.configuration || snapshot.mainGain != model.mainGain
                || snapshot.isMainPaused != model.paused || snapshot.isSuspended != model.suspended
            {
                return step
            }
        }
        return length
    }
}
