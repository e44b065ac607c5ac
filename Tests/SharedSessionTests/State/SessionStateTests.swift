import CRealtimeProbe
import SharedSessionTestSupport
import Testing

@testable import SharedSession

/// The state machine alone: each input and the effects it must return, in order. No threads, no
/// engine, no session: what the session performs is exactly this list.
@Suite("SessionState: input → effects")
struct SessionStateTests {
    static let t0 = ContinuousClock.now
    // The default fades, as promised (literals: a changed default must fail here, not move with it).
    static let fadeDown = Duration.milliseconds(150)
    static let fadeUp = Duration.milliseconds(400)

    /// A state with the main stream open (stream 1) and, if asked, one generic lease granted.
    static func state(withMain: Bool = true, generic: Bool = false) -> SessionState {
        var state = SessionState(policy: .default)
        if withMain {
            let (id, target) = try! state.addStream(
                StreamDescriptor(name: "main", role: .movie), isMain: true, owner: nil, volume: 1)
            _ = state.streamOpened(id, at: target)
        }
        if generic {
            _ = state.acquire(.generic, owner: "host", at: t0)
            _ = state.activationSucceeded()
        }
        return state
    }

    static let main = StreamID(rawValue: 1)

    static func lease(_ id: UInt64, _ owner: String, _ type: AudioSessionType) -> LeaseInfo {
        LeaseInfo(id: LeaseID(rawValue: id), owner: owner, type: type, acquiredAt: t0)
    }

    static func emit(_ kind: SessionEvent.Kind, _ cause: EventCause) -> SessionEffect {
        .emit(SessionEvent(kind, cause: cause))
    }

    @Test("the first lease asks for activation and is granted by its outcome, with one activated event")
    func firstLeaseActivates() {
        var state = Self.state()
        let (id, effects) = state.acquire(.generic, owner: "feed", at: Self.t0)
        #expect(effects == [.activate(.generic)])
        #expect(!state.isGranted(id))
        let cause = EventCause.sessionLease(id, owner: "feed")
        #expect(
            state.activationSucceeded() == [
                Self.emit(.leaseAcquired(Self.lease(1, "feed", .generic)), cause),
                Self.emit(.activated(.generic), cause),
            ])
        #expect(state.isGranted(id))
        #expect(state.appliedConfiguration == .generic)
    }

    @Test("a second lease of an active configuration is granted at once with no engine call")
    func secondLeaseNeedsNoEngine() {
        var state = Self.state(generic: true)
        let (id, effects) = state.acquire(.generic, owner: "feed", at: Self.t0)
        #expect(
            effects == [Self.emit(.leaseAcquired(Self.lease(2, "feed", .generic)), .sessionLease(id, owner: "feed"))])
    }

    @Test("voice over generic: activate, then start the capture, then grant and report the change")
    func voiceStartsCaptureBeforeGranting() {
        var state = Self.state(generic: true)
        let (id, effects) = state.acquire(.voice, owner: "party", at: Self.t0)
        #expect(effects == [.activate(.voice)])
        #expect(state.activationSucceeded() == [.startCapture])
        #expect(!state.isGranted(id))
        let cause = EventCause.sessionLease(id, owner: "party")
        #expect(
            state.captureStarted() == [
                Self.emit(.leaseAcquired(Self.lease(2, "party", .voice)), cause),
                Self.emit(.configurationChanged(from: .generic, to: .voice), cause),
            ])
        #expect(state.applied.capturing)
    }

    @Test("a capture that cannot start puts the engine back and refuses the voice lease; generic stays")
    func captureFailureRestores() {
        var state = Self.state(generic: true)
        let (id, _) = state.acquire(.voice, owner: "party", at: Self.t0)
        _ = state.activationSucceeded()
        let error = SessionError(code: .streamRefused, message: "no microphone")
        #expect(
            state.captureFailed(error) == [
                .restore(.generic),
                Self.emit(.activationFailed(.voice, message: "no microphone"), .sessionLease(id, owner: "party")),
            ])
        #expect(state.takeRefusal(id)?.code == .activationRefused)
        #expect(state.appliedConfiguration == .generic)
        #expect(state.requestedConfiguration == .generic)
        #expect(!state.applied.capturing)
    }

    @Test("a refused activation refuses only the leases waiting for it, and asks nothing more")
    func refusedActivation() {
        var state = Self.state()
        let (id, _) = state.acquire(.generic, owner: "feed", at: Self.t0)
        let effects = state.activationFailed(SessionError(code: .activationRefused, message: "busy"))
        #expect(effects == [Self.emit(.activationFailed(.generic, message: "busy"), .sessionLease(id, owner: "feed"))])
        #expect(state.takeRefusal(id)?.message.contains("busy") == true)
        #expect(state.requestedConfiguration == nil)
    }

    @Test("releasing voice with generic held: the release, then exactly one switch back, capture stopped")
    func voiceReleaseSwitchesBack() {
        var state = Self.state(generic: true)
        let (id, _) = state.acquire(.voice, owner: "party", at: Self.t0)
        _ = state.activationSucceeded()
        _ = state.captureStarted()
        let cause = EventCause.sessionLease(id, owner: "party")
        #expect(
            state.release(id, dropped: false) == [
                Self.emit(.leaseReleased(Self.lease(2, "party", .voice)), cause), .activate(.generic),
            ])
        #expect(
            state.activationSucceeded() == [
                .stopCapture, Self.emit(.configurationChanged(from: .voice, to: .generic), cause),
            ])
    }

    @Test("releasing the last lease: the release, then deactivation and one deactivated event")
    func lastReleaseDeactivates() {
        var state = Self.state(generic: true)
        let id = LeaseID(rawValue: 1)
        let cause = EventCause.sessionLease(id, owner: "host")
        #expect(
            state.release(id, dropped: false) == [
                Self.emit(.leaseReleased(Self.lease(1, "host", .generic)), cause),
                .deactivate(notifyingOthers: true),
                Self.emit(.deactivated(notifiedOthers: true), cause),
            ])
        #expect(state.release(id, dropped: false) == [])
    }

    @Test("a duck: its event, the gain event, then a ramp down; its release ramps up to the current volume")
    func duckRampsDownAndUp() {
        var state = Self.state()
        let (id, effects) = state.duck(owner: "feed", style: .duck(level: nil), at: Self.t0)
        let cause = EventCause.duckLease(id, owner: "feed")
        let info = DuckInfo(id: id, owner: "feed", style: .duck(level: nil), acquiredAt: Self.t0)
        #expect(
            effects == [
                Self.emit(.duckAcquired(info), cause), Self.emit(.mainGainChanged(from: 1, to: 0.1), cause),
                .setGain(Self.main, 0.1, ramp: Self.fadeDown),
            ])
        _ = state.setHostVolume(0.5)
        #expect(
            state.releaseDuck(id, dropped: false) == [
                Self.emit(.duckReleased(info), cause), Self.emit(.mainGainChanged(from: 0.05, to: 0.5), cause),
                .setGain(Self.main, 0.5, ramp: Self.fadeUp),
            ])
    }

    @Test("ducks never compound: a shallower duck under a deeper one changes nothing on the engine")
    func shallowerDuckChangesNothing() {
        var state = Self.state()
        _ = state.duck(owner: "a", style: .duck(level: 0.1), at: Self.t0)
        let (id, effects) = state.duck(owner: "b", style: .duck(level: 0.5), at: Self.t0)
        #expect(effects.allSatisfy { $0.event != nil })
        #expect(state.releaseDuck(id, dropped: false).allSatisfy { $0.event != nil })
        #expect(state.duckFactor == 0.1)
    }

    @Test("a value out of range is rejected before anything changes; a refused duck takes no lease id")
    func refusalsChangeNothing() throws {
        let strict = try UnitLimits(mayPauseMain: false, excess: .refuse)
        var state = SessionState(policy: try SessionPolicy(unitLimits: ["strict": strict]))
        let invalid = state.apply(.setMainVolume(1.5), at: Self.t0)
        guard case .rejected(let error) = invalid.outcome else {
            Issue.record("setMainVolume(1.5) came out as \(invalid.outcome)")
            return
        }
        #expect(error.code == .invalidValue)
        #expect(invalid.effects == [Self.emit(.requestRejected(error), .host)])
        #expect(state.hostVolume == 1)
        let pause = state.apply(.duck(DuckRequest(owner: "strict", style: .pause)), at: Self.t0)
        guard case .refused(let limit) = pause.outcome else {
            Issue.record("a pause beyond its unit's limits came out as \(pause.outcome)")
            return
        }
        #expect(limit.code == .limitExceeded)
        #expect(pause.effects == [Self.emit(.requestRejected(limit), .unit(owner: "strict"))])
        let (id, _) = state.duck(owner: "feed", style: .duck(level: nil), at: Self.t0)
        #expect(id == LeaseID(rawValue: 1))
    }

    @Test("a pause request pauses the main once; the host's play overrides it until the next request")
    func pauseRequestAndOverride() {
        var state = Self.state()
        let (first, effects) = state.duck(owner: "a", style: .pause, at: Self.t0)
        #expect(effects.filter { $0.event == nil } == [.setPaused(Self.main, true)])
        #expect(state.duck(owner: "b", style: .pause, at: Self.t0).1.filter { $0.event == nil } == [])
        #expect(state.play().filter { $0.event == nil } == [.setPaused(Self.main, false)])
        #expect(state.releaseDuck(first, dropped: false).filter { $0.event == nil } == [])
        #expect(!state.isMainPaused, "b's pause is still overridden")
        // The next request ends the override: the main pauses again.
        let again = state.duck(owner: "c", style: .pause, at: Self.t0).1
        #expect(again.filter { $0.event == nil } == [.setPaused(Self.main, true)])
        #expect(state.isMainPaused)
    }

    @Test("an interruption suspends rendering; its end with shouldResume wakes it")
    func interruptionSuspends() {
        var state = Self.state(generic: true)
        let began = EventCause.system(.interruptionBegan)
        #expect(
            state.handle(.interruptionBegan).effects == [
                Self.emit(.interruptionBegan, began), Self.emit(.renderingSuspended(true), began), .setSuspended(true),
            ])
        #expect(state.handle(.interruptionEnded(shouldResume: true)).effects.last == .setSuspended(false))
        #expect(state.handle(.interruptionEnded(shouldResume: true)).applied == false)
    }

    @Test("an interruption ended without shouldResume keeps the main paused through a later one that resumes")
    func waitingForHostSurvivesASecondInterruption() {
        var state = Self.state(generic: true)
        _ = state.handle(.interruptionBegan)
        let ended = state.handle(.interruptionEnded(shouldResume: false)).effects
        #expect(ended.contains(.setPaused(Self.main, true)))
        _ = state.handle(.interruptionBegan)
        let resumed = state.handle(.interruptionEnded(shouldResume: true)).effects
        #expect(!resumed.contains(.setPaused(Self.main, false)))
        #expect(state.isMainPaused)
        #expect(state.interruption == .endedWaitingForHost)
        #expect(state.play().contains(.setPaused(Self.main, false)))
        #expect(state.interruption == .none)
    }

    @Test("a reconnect re-sends every stream's gain (as a fade down), play state and the suspension")
    func reconnectResyncs() {
        var state = Self.state()
        // A second stream beside the main one, of a unit, at a volume of its own: "every stream" is both.
        let opened = state.apply(
            .openStream(
                StreamDescriptor(name: "far end", role: .communication), owner: "feed", volume: 0.5, isMain: false),
            at: Self.t0)
        guard case .opened(let voice) = opened.outcome else {
            Issue.record("the far end did not open: \(opened.outcome)")
            return
        }
        _ = state.duck(owner: "feed", style: .duck(level: 0.25), at: Self.t0)
        let event = EngineEvent.reconnected(attempts: 2, downtime: .milliseconds(300))
        // Each stream is told the gain the state holds for it.
        let streams = state.snapshot(at: Self.t0).streams
        let gains = Dictionary(uniqueKeysWithValues: streams.map { ($0.id, $0.gain) })
        #expect(gains[Self.main] == 0.25)
        #expect(streams.map(\.isMain) == [true, false])
        #expect(
            state.handleEngineEvent(event) == [
                Self.emit(.reconnected(attempts: 2, downtime: .milliseconds(300)), .engine(event)),
                .setGain(Self.main, 0.25, ramp: Self.fadeDown), .setPaused(Self.main, false),
                .setGain(voice, gains[voice] ?? -1, ramp: Self.fadeDown), .setPaused(voice, false),
                .setSuspended(false),
            ])
    }

    @Test("closing stops the capture, closes the streams, deactivates, and nothing reaches the engine after")
    func closeTearsDown() {
        var state = Self.state(generic: true)
        let (voice, _) = state.acquire(.voice, owner: "party", at: Self.t0)
        _ = state.activationSucceeded()
        _ = state.captureStarted()
        #expect(
            state.close() == [
                .stopCapture, .closeStream(Self.main), .deactivate(notifyingOthers: true),
                Self.emit(.deactivated(notifiedOthers: true), .host), Self.emit(.closed, .host),
            ])
        #expect(state.release(voice, dropped: false).allSatisfy { $0.event != nil })
        #expect(state.duck(owner: "late", style: .duck(level: nil), at: Self.t0).1.allSatisfy { $0.event != nil })
        #expect(state.removeStream(Self.main) == [])
        #expect(state.close() == [])
    }

    @Test("a gain change while the main is paused is still sent, so the stream resumes at its target")
    func gainWhilePausedIsSent() {
        var state = Self.state()
        _ = state.pause()
        let (_, effects) = state.duck(owner: "feed", style: .duck(level: nil), at: Self.t0)
        #expect(effects.contains(.setGain(Self.main, 0.1, ramp: Self.fadeDown)))
        #expect(state.play().filter { $0.event == nil } == [.setPaused(Self.main, false)])
    }

    // What this asserts is that the derived values stay right with 10,000 of each held; what they
    // cost is measured, not here, but by the coordination benchmark (BENCHMARKS.md's table of a pair's
    // time with 1, 100 and 10,000 held) and by the allocation tests of
    // RealtimeRenderTests+Coordination.swift, whose count per pair has the same bound with 1 and 100
    // leases held.
    @Test("the requested configuration and the duck factor stay right with 10,000 leases and ducks held")
    func manyLeasesStayCheap() {
        var state = Self.state(generic: true)
        var ducks: [LeaseID] = []
        for index in 0..<10_000 {
            _ = state.acquire(index.isMultiple(of: 2) ? .generic : .voice, owner: "u\(index)", at: Self.t0)
            if index == 1 {
                _ = state.activationSucceeded()
                _ = state.captureStarted()
            }
            ducks.append(state.duck(owner: "d\(index)", style: .duck(level: 0.5), at: Self.t0).0)
        }
        #expect(state.requestedConfiguration == .voice)
        #expect(state.duckFactor == 0.5)
        for id in ducks { _ = state.releaseDuck(id, dropped: false) }
        #expect(state.duckFactor == 1)
        #expect(state.snapshot(at: Self.t0).leases.count == 10_001)
    }
}

/// The inputs these tests give, each one ``SessionState/apply(_:at:)`` of one ``SessionRequest``.
extension SessionState {
    static let t0 = ContinuousClock.now

    mutating func effects(_ request: SessionRequest, at now: ContinuousClock.Instant = t0) -> [SessionEffect] {
        apply(request, at: now).effects
    }

    mutating func addStream(
        _ descriptor: StreamDescriptor, isMain: Bool, owner: String?, volume: Float
    ) throws(SessionError) -> (StreamID, StreamTarget) {
        try opening(descriptor, isMain: isMain, volume: volume)
    }

    mutating func streamOpened(_ id: StreamID, at target: StreamTarget) -> [SessionEffect] {
        // The main stream of these tests, as the session opens it after the engine did.
        let step = apply(
            .openStream(StreamDescriptor(name: "main", role: .movie), owner: nil, volume: 1, isMain: true), at: Self.t0)
        guard step.outcome == .opened(id) else { preconditionFailure("\(id) opened as \(step.outcome)") }
        return step.effects
    }

    mutating func acquire(_ type: AudioSessionType, owner: String, at now: ContinuousClock.Instant) -> (
        LeaseID, [SessionEffect]
    ) {
        let step = apply(.acquire(type, owner: owner), at: now)
        guard case .lease(let id) = step.outcome else { preconditionFailure("an acquire makes a lease") }
        return (id, step.effects)
    }

    mutating func activationSucceeded() -> [SessionEffect] {
        effects(.activationOutcome(requestedConfiguration ?? .generic, refused: nil))
    }

    mutating func activationFailed(_ error: SessionError) -> [SessionEffect] {
        effects(.activationOutcome(requestedConfiguration ?? .generic, refused: error.message))
    }

    mutating func captureStarted() -> [SessionEffect] { effects(.captureOutcome(refused: nil)) }

    mutating func captureFailed(_ error: SessionError) -> [SessionEffect] {
        effects(.captureOutcome(refused: error.message))
    }

    mutating func release(_ id: LeaseID, dropped: Bool) -> [SessionEffect] {
        effects(.releaseLease(id, dropped: dropped))
    }

    /// A duck request with no limits in play: the lease id and the effects.
    mutating func duck(owner: String, style: DuckStyle, at now: ContinuousClock.Instant) -> (LeaseID, [SessionEffect]) {
        let step = apply(.duck(DuckRequest(owner: owner, style: style)), at: now)
        guard case .duck(let id, _, _) = step.outcome else { preconditionFailure("refused: \(step.outcome)") }
        return (id, step.effects)
    }

    mutating func releaseDuck(_ id: LeaseID, dropped: Bool) -> [SessionEffect] {
        effects(.releaseDuck(id, dropped: dropped))
    }

    mutating func setHostVolume(_ volume: Float) -> [SessionEffect] { effects(.setMainVolume(volume)) }

    mutating func play() -> [SessionEffect] { effects(.play) }

    mutating func pause() -> [SessionEffect] { effects(.pause) }

    mutating func handle(_ event: SystemEvent) -> (applied: Bool, effects: [SessionEffect]) {
        let step = apply(.system(event), at: Self.t0)
        return (step.outcome == .applied, step.effects)
    }

    mutating func handleEngineEvent(_ event: EngineEvent) -> [SessionEffect] { effects(.engine(event)) }

    mutating func removeStream(_ id: StreamID) -> [SessionEffect] { effects(.closeStream(id)) }

    mutating func close() -> [SessionEffect] { effects(.close) }
}
