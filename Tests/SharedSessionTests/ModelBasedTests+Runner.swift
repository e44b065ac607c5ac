import Foundation
import Logging
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// A session on a recording engine and a manual clock, the model beside it, and the handles the
/// steps act on; runs a step on both and compares everything a user sees.
final class Runner {
    enum Outcome {
        case matched
        /// The step names a handle that does not exist (only in a shrink candidate).
        case invalid(String)
        case mismatched(String)
    }

    let engine = RecordingEngine()
    let time: ManualTime
    let session: SharedSession
    let delegate = RecordingDelegate()
    var model: SessionModel
    var leases: [SessionLease] = []
    var releasedLeases: [SessionLease] = []
    var ducks: [DuckLease] = []
    var releasedDucks: [DuckLease] = []
    var main: StreamHandle?
    var overlays: [StreamHandle] = []
    var closedStreams: [StreamHandle] = []
    /// The voice-activity duck each stream was last told (gain, meters followed); none: not told.
    var activity: [StreamID: RecordingEngine.Call] = [:]

    static let quiet = Logger(label: "model-based") { _ in SwiftLogNoOpLogHandler() }

    init(policy: SessionPolicy) {
        let start = ContinuousClock.now
        time = ManualTime(start)
        session = SharedSession(engine: engine, policy: policy, logger: Self.quiet, clock: .manual(time))
        session.delegate = delegate
        model = SessionModel(policy: policy, now: start)
    }

    // MARK: Generating

    /// A step that applies now, drawn at random among those that do.
    func generate(_ random: inout SplitMix64) -> Step {
        // The choices below are closures kept in a list: they draw from a local copy, handed back at the end.
        var rng = random
        defer { random = rng }
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &rng)] }
        let owner = pick(ModelBasedTests.owners)
        let level: Float? = pick([nil, 0, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.8, 1])
        let hold: Int? = pick([nil, nil, nil, 100, 300, 500, 800])
        let volume: Float = pick([0, 0.25, 0.5, 0.8, 1, Float.random(in: 0...1, using: &rng)])
        var choices: [(weight: Int, step: () -> Step)] = [
            (4, { .acquire(.generic, owner: owner) }),
            (3, { .acquire(.voice, owner: owner) }),
            (5, { .duck(owner: owner, level: level, holdMilliseconds: hold) }),
            (2, { .pauseMain(owner: owner, holdMilliseconds: hold) }),
            (3, { .followActivity(owner: owner, overlay: nil, level: level, holdMilliseconds: hold) }),
            (1, { .invalidDuckLevel(owner: owner, pick([-0.1, 1.5, .nan, .infinity])) }),
            (3, { .setMainVolume(volume) }),
            (1, { .invalidMainVolume(pick([-0.5, 2, .nan, .infinity])) }),
            (2, { .play }),
            (2, { .pause }),
            (1, { .suspend(renderAnyway: pick([false, true])) }),
            (1, { .wake }),
            (1, { .system(.interruptionBegan) }),
            (1, { .system(.interruptionEnded(shouldResume: pick([false, true]))) }),
            (1, { .system(.didEnterBackground) }),
            (1, { .system(.willEnterForeground) }),
            (1, { .system(pick([.otherAudioStarted, .otherAudioStopped])) }),
            (
                1,
                {
                    .system(
                        .routeChanged(
                            RouteChange(
                                reason: pick([.oldDeviceUnavailable, .newDeviceAvailable, .categoryChange]),
                                currentOutput: pick([nil, "speaker", "headphones"]))))
                }
            ),
            (4, { .advance(milliseconds: pick([10, 100, 250, 400, 600])) }),
            (2, { .openOverlay(owner: pick([nil, owner]), volume: volume, backgroundMusic: pick([false, true])) }),
            (1, { .connectionLost }),
            (1, { .reconnected(attempts: pick([1, 3])) }),
            (1, { .quantumChanged(pick([256, 1024, 4096])) }),
        ]
        if !leases.isEmpty {
            choices.append((4, { .releaseLease(Int.random(in: 0..<self.leases.count, using: &rng)) }))
            choices.append((1, { .dropLease(Int.random(in: 0..<self.leases.count, using: &rng)) }))
        }
        if !releasedLeases.isEmpty {
            choices.append((1, { .releaseLeaseAgain(Int.random(in: 0..<self.releasedLeases.count, using: &rng)) }))
        }
        if !ducks.isEmpty {
            choices.append((5, { .releaseDuck(Int.random(in: 0..<self.ducks.count, using: &rng)) }))
            choices.append((1, { .dropDuck(Int.random(in: 0..<self.ducks.count, using: &rng)) }))
        }
        if !releasedDucks.isEmpty {
            choices.append((1, { .releaseDuckAgain(Int.random(in: 0..<self.releasedDucks.count, using: &rng)) }))
        }
        if main == nil {
            choices.append(
                (3, { .openMain(backgroundMusic: pick([false, false, true]), exempt: pick([false, false, true])) }))
        } else {
            choices.append((1, { .closeMain }))
            choices.append((1, { .externalVolume(overlay: nil, volume) }))
            choices.append((1, { .streamFault(overlay: nil) }))
            choices.append((1, { .outputLatency(overlay: nil, milliseconds: pick([11, 43, 213])) }))
        }
        if !overlays.isEmpty {
            let overlay = { Int.random(in: 0..<self.overlays.count, using: &rng) }
            choices.append((1, { .closeOverlay(overlay()) }))
            choices.append((1, { .setOverlayVolume(overlay(), volume) }))
            choices.append(
                (3, { .followActivity(owner: owner, overlay: overlay(), level: level, holdMilliseconds: hold) }))
            choices.append((1, { .streamFault(overlay: overlay()) }))
            choices.append((1, { .externalVolume(overlay: overlay(), volume) }))
            choices.append((1, { .outputLatency(overlay: overlay(), milliseconds: pick([11, 43, 213])) }))
        }
        if !closedStreams.isEmpty {
            let closed = { Int.random(in: 0..<self.closedStreams.count, using: &rng) }
            choices.append((1, { .followClosedStream(owner: owner, closed()) }))
            choices.append((1, { .setClosedStreamVolume(closed()) }))
        }
        if !model.closed { choices.append((1, { .close })) }
        var draw = Int.random(in: 0..<choices.reduce(0) { $0 + $1.weight }, using: &rng)
        for choice in choices {
            if draw < choice.weight { return choice.step() }
            draw -= choice.weight
        }
        preconditionFailure("the draw is below the total weight")
    }

    // MARK: Running

    /// Runs `step` on the session and the model, then compares.
    func run(_ step: Step) -> Outcome {
        model.events.removeAll()
        model.calls.removeAll()
        engine.removeAllCalls()
        delegate.removeAll()
        var problems: [String] = []
        func expect(_ ok: Bool, _ what: @autoclosure () -> String) { if !ok { problems.append(what()) } }
        func index(_ n: Int, _ count: Int, _ what: String) -> Int? { n < count ? n : nil }

        switch step {
        case .acquire(let type, let owner):
            let expected = model.acquire(type, owner: owner)
            do {
                let lease = try session.acquire(type, owner: owner)
                leases.append(lease)
                if case .success(let (id, granted)) = expected {
                    expect(
                        lease.id == id && lease.type == granted,
                        "lease \(lease.id) \(lease.type), model \(id) \(granted)")
                } else {
                    expect(false, "acquire granted \(lease.type) \(lease.id); the model refuses: \(expected)")
                }
            } catch {
                if case .failure(let refusal) = expected {
                    expect(error.code == refusal.code, "acquire refused with \(error.code), model \(refusal.code)")
                } else {
                    expect(false, "acquire refused (\(error)); the model grants it")
                }
            }
        case .releaseLease(let n), .dropLease(let n):
            guard let i = index(n, leases.count, "lease") else { return .invalid("no lease #\(n)") }
            let id = leases[i].id
            var dropped = true
            if case .releaseLease = step {
                dropped = false
                leases[i].release()
                releasedLeases.append(leases[i])
            }
            leases.remove(at: i)  // the last reference to a dropped lease: deinit releases it
            model.releaseLease(id, dropped: dropped)
        case .releaseLeaseAgain(let n):
            guard n < releasedLeases.count else { return .invalid("no released lease #\(n)") }
            let lease = releasedLeases[n]
            lease.release()
            model.releaseIgnored(owner: lease.owner, cause: .sessionLease(lease.id, owner: lease.owner))
        case .duck(let owner, let level, let hold):
            duck(DuckRequest(owner: owner, style: .duck(level: level), maximumHold: hold.map { .milliseconds($0) }))
        case .pauseMain(let owner, let hold):
            if let hold {
                duck(DuckRequest(owner: owner, style: .pause, maximumHold: .milliseconds(hold)))
            } else {
                // The shorthand: a refused request gives a lease released from the start.
                let expected = model.duck(DuckRequest(owner: owner, style: .pause))
                let lease = session.pauseMain(owner: owner)
                switch expected {
                case .success(let info):
                    expect(lease.id == info.id && lease.style == info.style, "pauseMain gave \(lease), model \(info)")
                    ducks.append(lease)
                case .failure:
                    expect(!lease.isHeld, "pauseMain refused by the model, yet \(lease) is held")
                    releasedDucks.append(lease)
                }
            }
        case .followActivity(let owner, let overlay, let level, let hold):
            let source: ActivitySource
            if let overlay {
                guard overlay < overlays.count else { return .invalid("no overlay #\(overlay)") }
                source = .stream(overlays[overlay].id)
            } else {
                source = .voiceInput
            }
            duck(
                DuckRequest(
                    owner: owner, style: .followActivity(source, level: level),
                    maximumHold: hold.map { .milliseconds($0) }))
        case .followClosedStream(let owner, let n):
            guard n < closedStreams.count else { return .invalid("no closed stream #\(n)") }
            duck(DuckRequest(owner: owner, style: .followActivity(.stream(closedStreams[n].id), level: nil)))
        case .invalidDuckLevel(let owner, let level):
            duck(DuckRequest(owner: owner, style: .duck(level: level)))
        case .releaseDuck(let n), .dropDuck(let n):
            guard n < ducks.count else { return .invalid("no duck #\(n)") }
            guard let id = ducks[n].id else { return .mismatched("\(ducks[n]) is held, yet has no id") }
            var dropped = true
            if case .releaseDuck = step {
                dropped = false
                ducks[n].release()
                releasedDucks.append(ducks[n])
            }
            ducks.remove(at: n)
            model.releaseDuck(id, dropped: dropped)
        case .releaseDuckAgain(let n):
            guard n < releasedDucks.count else { return .invalid("no released duck #\(n)") }
            let lease = releasedDucks[n]
            lease.release()
            model.releaseIgnored(
                owner: lease.owner,
                cause: lease.id.map { .duckLease($0, owner: lease.owner) } ?? .unit(owner: lease.owner))
        case .setMainVolume(let volume):
            do {
                try session.setMainVolume(volume)
            } catch {
                expect(false, "setMainVolume(\(volume)) refused: \(error)")
            }
            model.setMainVolume(volume)
        case .invalidMainVolume(let volume):
            do {
                try session.setMainVolume(volume)
                expect(false, "setMainVolume(\(volume)) accepted")
            } catch {
                expect(error.code == .invalidValue, "setMainVolume(\(volume)) refused with \(error.code)")
            }
            model.rejected(.invalidValue)
        case .play:
            session.play()
            model.play()
        case .pause:
            session.pause()
            model.pause()
        case .suspend(let anyway):
            session.suspend(renderAnyway: anyway)
            model.suspend(renderAnyway: anyway)
        case .wake:
            session.wakeFromSuspend()
            model.wake()
        case .system(let event):
            session.handle(event)
            model.handle(event)
        case .advance(let milliseconds):
            model.now = model.now + .milliseconds(milliseconds)
            time.set(model.now)
            // What the session's deadline wake-up does when it fires, at the time the manual clock says.
            _ = session.submitRecorded(SessionInput(.expireDeadlines))
            model.expireDeadlines()
        case .openMain(let music, let exempt):
            guard main == nil else { return .invalid("a main stream is open") }
            let descriptor = StreamDescriptor(name: "movie", role: .movie, isBackgroundMusic: music, isExempt: exempt)
            let expected = model.openStream(descriptor, isMain: true, owner: nil, volume: 1)
            do {
                let handle = try session.openMainStream(
                    descriptor, source: try SineSource(frequency: 440, amplitude: 0.5))
                main = handle
                expect((try? expected.get()) == handle.id, "main stream \(handle.id), model \(expected)")
            } catch {
                expect((try? expected.get()) == nil, "main stream refused (\(error)), model \(expected)")
            }
        case .closeMain:
            guard let handle = main else { return .invalid("no main stream") }
            handle.close()
            model.closeStream(handle.id)
            closedStreams.append(handle)
            main = nil
        case .openOverlay(let owner, let volume, let music):
            let descriptor = StreamDescriptor(name: "overlay", role: .game, isBackgroundMusic: music)
            let expected = model.openStream(descriptor, isMain: false, owner: owner, volume: volume)
            do {
                let handle = try session.openStream(
                    descriptor, source: try SineSource(frequency: 660, amplitude: 0.5), volume: volume, owner: owner)
                overlays.append(handle)
                expect((try? expected.get()) == handle.id, "overlay \(handle.id), model \(expected)")
            } catch {
                expect((try? expected.get()) == nil, "overlay refused (\(error)), model \(expected)")
            }
        case .closeOverlay(let n):
            guard n < overlays.count else { return .invalid("no overlay #\(n)") }
            let handle = overlays.remove(at: n)
            handle.close()
            model.closeStream(handle.id)
            closedStreams.append(handle)
        case .setOverlayVolume(let n, let volume):
            guard n < overlays.count else { return .invalid("no overlay #\(n)") }
            let accepted = model.setStreamVolume(overlays[n].id, volume)
            do {
                try overlays[n].setVolume(volume)
                expect(accepted, "the volume of \(overlays[n].id) was set; the model refuses it")
            } catch {
                expect(!accepted, "the volume of \(overlays[n].id) was refused: \(error)")
            }
        case .setClosedStreamVolume(let n):
            guard n < closedStreams.count else { return .invalid("no closed stream #\(n)") }
            let handle = closedStreams[n]
            let accepted = model.setStreamVolume(handle.id, 0.5)
            do {
                try handle.setVolume(0.5)
                expect(accepted, "the volume of closed \(handle.id) was set")
            } catch {
                expect(!accepted && error.code == .unknownStream, "the volume of \(handle.id) was refused: \(error)")
            }
        case .connectionLost:
            emit(.connectionLost(reason: "the daemon went away"))
        case .reconnected(let attempts):
            emit(.reconnected(attempts: attempts, downtime: .milliseconds(250 * attempts)))
        case .quantumChanged(let frames):
            emit(.quantumChanged(frames: frames))
        case .outputLatency(let overlay, let milliseconds):
            guard let id = stream(overlay) else { return .invalid("no stream \(String(describing: overlay))") }
            emit(.outputLatencyChanged(stream: id, from: nil, to: .milliseconds(milliseconds)))
        case .streamFault(let overlay):
            guard let id = stream(overlay) else { return .invalid("no stream \(String(describing: overlay))") }
            emit(.streamFault(stream: id, reason: "the node errored"))
        case .externalVolume(let overlay, let volume):
            guard let id = stream(overlay) else { return .invalid("no stream \(String(describing: overlay))") }
            emit(.externalVolumeChange(stream: id, volume: volume))
        case .close:
            session.close()
            model.close()
        }
        compare(&problems)
        return problems.isEmpty ? .matched : .mismatched(problems.joined(separator: "; "))
    }

    private func stream(_ overlay: Int?) -> StreamID? {
        guard let overlay else { return main?.id }
        return overlay < overlays.count ? overlays[overlay].id : nil
    }

    private func emit(_ event: EngineEvent) {
        engine.emit(event)
        model.engine(event)
    }

    /// `duck(_:)` on both, keeping the lease it gave.
    private func duck(_ request: DuckRequest) {
        let expected = model.duck(request)
        do {
            let lease = try session.duck(request)
            ducks.append(lease)
            if case .success(let info) = expected, lease.id == info.id, lease.style == info.style { return }
            model.events.append(
                SessionEvent(.releaseIgnored(owner: "model", what: "duck granted: \(lease)"), cause: .host))
        } catch {
            if case .failure(let refusal) = expected, refusal.code == error.code { return }
            model.events.append(
                SessionEvent(.releaseIgnored(owner: "model", what: "duck refused: \(error)"), cause: .host))
        }
    }

    // MARK: Comparing

    /// An event as compared: a refusal by its code, an ignored release by its owner and cause (their
    /// messages are prose).
    static func normalized(_ event: SessionEvent) -> SessionEvent {
        switch event.kind {
        case .requestRejected(let error):
            SessionEvent(.requestRejected(SessionError(code: error.code, message: "")), cause: event.cause)
        case .releaseIgnored(let owner, _): SessionEvent(.releaseIgnored(owner: owner, what: ""), cause: event.cause)
        default: event
        }
    }

    /// A duck with everything compared: its deadline (after the start of the manual clock) and limits.
    static func describe(_ duck: DuckInfo) -> String {
        "\(duck) at \(duck.acquiredAt), deadline \(duck.deadline.map { "\($0)" } ?? "none"), limits \(duck.appliedLimits)"
    }

    private func compare(_ problems: inout [String]) {
        func expect(_ ok: Bool, _ what: @autoclosure () -> String) { if !ok { problems.append(what()) } }
        let events = delegate.events.map(Self.normalized)
        expect(events == model.events, "events \(events), model \(model.events)")
        let calls = engine.calls
        expect(calls == model.calls, "engine calls \(calls), model \(model.calls)")
        for call in calls { if case .setActivityDuck(let id, _, _) = call { activity[id] = call } }
        for stream in model.streams where !model.closed {
            let told = activity[stream.id].flatMap { call -> RecordingEngine.Call? in
                if case .setActivityDuck(_, _, let following) = call, following > 0 { return call }
                return nil
            }
            let expected = model.target(stream).activity.map {
                RecordingEngine.Call.setActivityDuck(stream.id, gain: $0.gain, following: $0.sources.count)
            }
            expect(
                told == expected,
                "\(stream.id) follows \(String(describing: told)), model \(String(describing: expected))")
        }
        expect(
            engine.activeConfiguration == model.configuration,
            "engine configuration \(String(describing: engine.activeConfiguration)), model \(String(describing: model.configuration))"
        )
        expect(engine.isCapturing == model.capturing, "engine capturing \(engine.isCapturing)")
        expect(engine.isSuspended == model.engineSuspended, "engine suspended \(engine.isSuspended)")
        expect(engine.gains == model.engineGains, "engine gains \(engine.gains), model \(model.engineGains)")
        expect(engine.paused == model.enginePaused, "engine paused \(engine.paused), model \(model.enginePaused)")

        let snapshot = session.snapshot
        expect(
            snapshot.activeConfiguration == model.configuration,
            "snapshot configuration \(String(describing: snapshot.activeConfiguration))")
        let leases = model.leases.filter(\.granted).map(\.info)
        expect(snapshot.leases == leases, "snapshot leases \(snapshot.leases), model \(leases)")
        expect(
            snapshot.ducks == model.ducks,
            "snapshot ducks \(snapshot.ducks.map(Self.describe)), model \(model.ducks.map(Self.describe))")
        expect(
            snapshot.mainVolume == model.hostVolume,
            "snapshot mainVolume \(snapshot.mainVolume), model \(model.hostVolume)")
        expect(
            snapshot.duckFactor == model.duckFactor,
            "snapshot duckFactor \(snapshot.duckFactor), model \(model.duckFactor)")
        expect(snapshot.mainGain == model.mainGain, "snapshot mainGain \(snapshot.mainGain), model \(model.mainGain)")
        expect(
            snapshot.hostWantsPlayback == model.hostWantsPlay,
            "snapshot hostWantsPlayback \(snapshot.hostWantsPlayback)")
        expect(
            snapshot.isMainPaused == model.mainPaused,
            "snapshot isMainPaused \(snapshot.isMainPaused), model \(model.mainPaused)")
        expect(
            snapshot.interruption == model.phase, "snapshot interruption \(snapshot.interruption), model \(model.phase)"
        )
        expect(
            snapshot.isSuspended == model.suspended,
            "snapshot isSuspended \(snapshot.isSuspended), model \(model.suspended)")
        expect(snapshot.isInBackground == model.background, "snapshot isInBackground \(snapshot.isInBackground)")
        expect(
            snapshot.isOtherAudioPlaying == model.otherAudio,
            "snapshot isOtherAudioPlaying \(snapshot.isOtherAudioPlaying)")
        expect(
            snapshot.secondaryAudioShouldBeSilencedHint == model.otherAudio,
            "snapshot hint \(snapshot.secondaryAudioShouldBeSilencedHint)")
        expect(
            snapshot.isBackgroundMusicMuted == model.backgroundMusicMuted,
            "snapshot isBackgroundMusicMuted \(snapshot.isBackgroundMusicMuted), model \(model.backgroundMusicMuted)")
        expect(snapshot.currentRoute == model.route, "snapshot route \(String(describing: snapshot.currentRoute))")
        let streams = model.streams.map(model.info)
        expect(snapshot.streams == streams, "snapshot streams \(snapshot.streams), model \(streams)")
        expect(
            snapshot.isEngineConnected == model.connected, "snapshot isEngineConnected \(snapshot.isEngineConnected)")
        expect(snapshot.quantum == model.quantum, "snapshot quantum \(snapshot.quantum), model \(model.quantum)")
        for duck in snapshot.ducks {
            expect(snapshot.age(of: duck) == model.now - duck.acquiredAt, "age of \(duck)")
            expect(snapshot.timeLeft(of: duck) == duck.deadline.map { $0 - model.now }, "time left of \(duck)")
        }
    }
}
