/// The coordinator's state: a plain value with no threads, locks or engine in it.
///
/// Every mutation records what happened and appends events to ``outbox``; everything the engine
/// must do is derived (``engineTarget``) from the live leases and the host's settings, never pushed
/// and popped, so no order of releases and no volume change can leave a stale value behind (as
/// Chromium's audio focus manager recomputes from its whole stack, and PulseAudio's role ducking keeps
/// the duck as a separate factor on top of the stream volume). ``SharedSession`` wraps it in a mutex
/// and performs the engine calls and event delivery after the lock is released.
struct SessionState: Sendable {
    struct LeaseRecord: Sendable, Hashable {
        var info: LeaseInfo
        /// Whether the configuration the lease needs was active when it was last checked; a lease
        /// is handed out only once granted.
        var granted: Bool
    }

    struct StreamRecord: Sendable, Hashable {
        let id: StreamID
        let descriptor: StreamDescriptor
        let isMain: Bool
        /// The unit that opened it, or `nil` for the host.
        let owner: String?
        var volume: Float

        var cause: EventCause { owner.map { .unit(owner: $0) } ?? .host }
    }

    struct StreamTarget: Sendable, Hashable {
        var gain: Float
        var paused: Bool
    }

    /// What the engine should have, derived from the state.
    struct EngineTarget: Sendable, Hashable {
        var configuration: SessionConfiguration?
        var suspended: Bool
        var streams: [StreamID: StreamTarget]
    }

    /// The observable values whose changes become events.
    private struct Observed: Equatable {
        var hostVolume: Float
        var mainGain: Float
        var mainPaused: Bool
        var suspended: Bool
        var backgroundMusicMuted: Bool
    }

    let policy: SessionPolicy
    private(set) var leases: [LeaseRecord] = []
    private(set) var ducks: [DuckInfo] = []
    private(set) var hostVolume: Float = 1
    private(set) var hostWantsPlay = true
    /// The host pressed play while pause requests were live; lasts until the next pause request.
    private(set) var hostOverridesPause = false
    private(set) var interruption: InterruptionPhase = .none
    private(set) var inBackground = false
    /// A manual `suspend(renderAnyway:)`: `nil` when not suspended by hand.
    private(set) var manualSuspension: ManualSuspension?
    private(set) var otherAudioPlaying = false
    private(set) var currentRoute: String?
    private(set) var streams: [StreamRecord] = []
    /// The configuration the engine last accepted; only the reconcile step changes it.
    private(set) var appliedConfiguration: SessionConfiguration?
    private(set) var isClosed = false
    private(set) var engineConnected = true
    private(set) var quantum = 0
    /// The cause of the latest mutation, given to the events the reconcile step produces for it.
    private(set) var lastCause: EventCause = .host
    private(set) var outbox: [SessionEvent] = []
    /// Why leases waiting for a configuration were refused, until their acquirer collects it.
    private var refusals: [LeaseID: SessionError] = [:]
    private var nextLease: UInt64 = 1
    private var nextStream: UInt64 = 1

    struct ManualSuspension: Sendable, Hashable {
        var renderAnyway: Bool
    }

    init(policy: SessionPolicy) {
        self.policy = policy
    }

    // MARK: Derived

    /// Voice if any voice lease is live, else generic if any generic lease is, else inactive.
    var requestedConfiguration: SessionConfiguration? {
        if leases.contains(where: { $0.info.type == .voice }) { return policy.voiceConfiguration }
        if !leases.isEmpty { return policy.genericConfiguration }
        return nil
    }

    /// The lowest level among live ducks, and the other-audio duck if the policy asks for it; ducks
    /// never compound.
    var duckFactor: Float {
        var factor: Float = 1
        for duck in ducks {
            if case .duck(let level) = duck.style { factor = min(factor, level ?? policy.duckLevel) }
        }
        if policy.duckWhenOtherAudioPlays, otherAudioPlaying { factor = min(factor, policy.duckLevel) }
        return factor
    }

    var pauseRequested: Bool { ducks.contains { $0.style == .pause } }

    var isMainPaused: Bool {
        !hostWantsPlay || (pauseRequested && !hostOverridesPause) || interruption == .endedWaitingForHost
    }

    /// The configuration whose background behaviour applies: the active one, else the generic one.
    private var governingConfiguration: SessionConfiguration {
        appliedConfiguration ?? policy.genericConfiguration
    }

    var isSuspended: Bool {
        if interruption == .interrupted { return true }
        if let manualSuspension, !manualSuspension.renderAnyway { return true }
        if inBackground {
            guard let active = appliedConfiguration else { return true }
            return !active.category.rendersInBackground || policy.suspendInBackground
        }
        return false
    }

    /// Suspended by hand with `renderAnyway`: sources keep running, output is muted.
    private var isMutedByHand: Bool { manualSuspension?.renderAnyway == true }

    var isBackgroundMusicMuted: Bool { otherAudioPlaying && governingConfiguration.mixesWithOthers }

    var mainGain: Float {
        guard !isMutedByHand else { return 0 }
        if isBackgroundMusicMuted, let main = streams.first(where: \.isMain), main.descriptor.isBackgroundMusic {
            return 0
        }
        return hostVolume * duckFactor
    }

    func target(for stream: StreamRecord) -> StreamTarget {
        if stream.isMain { return StreamTarget(gain: mainGain, paused: isMainPaused) }
        let muted = isMutedByHand || (isBackgroundMusicMuted && stream.descriptor.isBackgroundMusic)
        return StreamTarget(gain: muted ? 0 : stream.volume, paused: false)
    }

    var engineTarget: EngineTarget {
        EngineTarget(
            configuration: requestedConfiguration,
            suspended: isSuspended,
            streams: Dictionary(uniqueKeysWithValues: streams.map { ($0.id, target(for: $0)) }))
    }

    var mainStreamID: StreamID? { streams.first(where: \.isMain)?.id }

    func snapshot(at now: ContinuousClock.Instant) -> SessionSnapshot {
        SessionSnapshot(
            activeConfiguration: appliedConfiguration,
            leases: leases.filter(\.granted).map(\.info),
            ducks: ducks,
            mainVolume: hostVolume,
            duckFactor: duckFactor,
            mainGain: mainGain,
            hostWantsPlayback: hostWantsPlay,
            isMainPaused: isMainPaused,
            interruption: interruption,
            isSuspended: isSuspended,
            isInBackground: inBackground,
            isOtherAudioPlaying: otherAudioPlaying,
            secondaryAudioShouldBeSilencedHint: otherAudioPlaying,
            isBackgroundMusicMuted: isBackgroundMusicMuted,
            currentRoute: currentRoute,
            streams: streams.map(info(of:)),
            isEngineConnected: engineConnected,
            quantum: quantum,
            takenAt: now)
    }

    private var observed: Observed {
        Observed(
            hostVolume: hostVolume, mainGain: mainGain, mainPaused: isMainPaused, suspended: isSuspended,
            backgroundMusicMuted: isBackgroundMusicMuted)
    }

    // MARK: Event bookkeeping

    mutating func takeEvents() -> [SessionEvent] {
        defer { outbox.removeAll(keepingCapacity: true) }
        return outbox
    }

    private mutating func emit(_ kind: SessionEvent.Kind, _ cause: EventCause) {
        outbox.append(SessionEvent(kind, cause: cause))
    }

    /// Runs a mutation and emits an event for every observable value it changed, with `cause`.
    private mutating func change(_ cause: EventCause, _ body: (inout SessionState) -> Void) {
        let before = observed
        lastCause = cause
        body(&self)
        let after = observed
        if before.hostVolume != after.hostVolume {
            emit(.mainVolumeChanged(from: before.hostVolume, to: after.hostVolume), cause)
        }
        if before.suspended != after.suspended { emit(.renderingSuspended(after.suspended), cause) }
        if before.backgroundMusicMuted != after.backgroundMusicMuted {
            emit(.backgroundMusicMuted(after.backgroundMusicMuted), cause)
        }
        if before.mainPaused != after.mainPaused {
            emit(.mainPlaybackChanged(isPaused: after.mainPaused), cause)
        }
        if before.mainGain != after.mainGain {
            emit(.mainGainChanged(from: before.mainGain, to: after.mainGain), cause)
        }
    }

    // MARK: Leases

    /// Adds a session lease. It is granted at once if the configuration it needs is already active;
    /// otherwise the reconcile step activates it and grants it (or refuses it).
    mutating func acquire(_ type: AudioSessionType, owner: String, at now: ContinuousClock.Instant) -> LeaseID {
        let id = LeaseID(rawValue: nextLease)
        nextLease += 1
        let info = LeaseInfo(id: id, owner: owner, type: type, acquiredAt: now)
        change(.sessionLease(id, owner: owner)) { state in
            state.leases.append(LeaseRecord(info: info, granted: false))
            if state.requestedConfiguration == state.appliedConfiguration {
                state.grantPending()
            }
        }
        return id
    }

    /// Whether a lease is live and granted.
    func isGranted(_ id: LeaseID) -> Bool { leases.contains { $0.info.id == id && $0.granted } }

    /// Removes a session lease. Returns `false` (and changes nothing) if it is not live.
    mutating func release(_ id: LeaseID, dropped: Bool) -> Bool {
        guard let index = leases.firstIndex(where: { $0.info.id == id }) else { return false }
        let info = leases[index].info
        change(.sessionLease(id, owner: info.owner)) { state in
            state.leases.remove(at: index)
            state.emit(dropped ? .leaseDropped(info) : .leaseReleased(info), .sessionLease(id, owner: info.owner))
        }
        return true
    }

    mutating func duck(owner: String, style: DuckStyle, at now: ContinuousClock.Instant) -> LeaseID {
        let id = LeaseID(rawValue: nextLease)
        nextLease += 1
        let info = DuckInfo(id: id, owner: owner, style: style, acquiredAt: now)
        change(.duckLease(id, owner: owner)) { state in
            state.emit(.duckAcquired(info), .duckLease(id, owner: owner))
            if style == .pause { state.hostOverridesPause = false }
            state.ducks.append(info)
        }
        return id
    }

    mutating func releaseDuck(_ id: LeaseID, dropped: Bool) -> Bool {
        guard let index = ducks.firstIndex(where: { $0.id == id }) else { return false }
        let info = ducks[index]
        change(.duckLease(id, owner: info.owner)) { state in
            state.ducks.remove(at: index)
            state.emit(dropped ? .duckDropped(info) : .duckReleased(info), .duckLease(id, owner: info.owner))
            if !state.pauseRequested { state.hostOverridesPause = false }
        }
        return true
    }

    mutating func noteIgnoredRelease(owner: String, what: String, cause: EventCause) {
        emit(.releaseIgnored(owner: owner, what: what), cause)
    }

    mutating func noteRejected(_ error: SessionError) {
        emit(.requestRejected(error), .host)
    }

    // MARK: Activation results (the reconcile step)

    private mutating func grantPending() {
        for index in leases.indices where !leases[index].granted {
            leases[index].granted = true
            emit(
                .leaseAcquired(leases[index].info),
                .sessionLease(leases[index].info.id, owner: leases[index].info.owner))
        }
    }

    /// The engine activated `configuration`: grant the waiting leases, then report the change.
    mutating func activationSucceeded(_ configuration: SessionConfiguration) {
        let previous = appliedConfiguration
        let cause = lastCause
        change(cause) { state in
            state.appliedConfiguration = configuration
            if state.requestedConfiguration == configuration { state.grantPending() }
            if let previous {
                state.emit(.configurationChanged(from: previous, to: configuration), cause)
            } else {
                state.emit(.activated(configuration), cause)
            }
        }
    }

    /// The engine refused `configuration`: the leases waiting for it are not granted. Returns them.
    mutating func activationFailed(_ configuration: SessionConfiguration, message: String) -> [LeaseID] {
        let refused = leases.filter { !$0.granted && policy.configuration(for: $0.info.type) == configuration }
        let cause = lastCause
        change(cause) { state in
            state.leases.removeAll { record in refused.contains { $0.info.id == record.info.id } }
            for record in refused {
                state.refusals[record.info.id] = SessionError(
                    code: .activationRefused,
                    message: "the engine refused to activate \(configuration) for the \(record.info.type) session "
                        + "of \(record.info.owner): \(message); fall back to another engine or retry later")
            }
            state.emit(.activationFailed(configuration, message: message), cause)
        }
        return refused.map(\.info.id)
    }

    /// Takes the reason a lease was refused, if it was. A lease still waiting after the reconcile step
    /// (the session was closed, or the engine kept changing its mind) is removed and refused too.
    mutating func takeRefusal(_ id: LeaseID) -> SessionError? {
        if let refusal = refusals.removeValue(forKey: id) { return refusal }
        guard let index = leases.firstIndex(where: { $0.info.id == id && !$0.granted }) else { return nil }
        let owner = leases[index].info.owner
        leases.remove(at: index)
        if isClosed {
            return SessionError(
                code: .sessionClosed,
                message:
                    "the session is closed, so the session of \(owner) cannot be activated: make a new SharedSession")
        }
        return SessionError(
            code: .activationRefused,
            message:
                "the engine did not settle on a configuration for the session of \(owner): retry, or check the engine")
    }

    mutating func deactivated() {
        let cause = lastCause
        change(cause) { state in
            state.appliedConfiguration = nil
            state.emit(.deactivated(notifiedOthers: state.policy.notifyOthersOnDeactivation), cause)
        }
    }

    // MARK: Host

    mutating func setHostVolume(_ volume: Float, cause: EventCause = .host) {
        change(cause) { $0.hostVolume = volume }
    }

    mutating func play() {
        change(.host) { state in
            state.hostWantsPlay = true
            if state.pauseRequested { state.hostOverridesPause = true }
            if state.interruption != .none {
                state.interruption = .none
                state.emit(.interruptionEnded(shouldResume: true), .host)
            }
        }
    }

    mutating func pause() {
        change(.host) { $0.hostWantsPlay = false }
    }

    mutating func suspend(renderAnyway: Bool) {
        change(.host) { $0.manualSuspension = ManualSuspension(renderAnyway: renderAnyway) }
    }

    mutating func wakeFromSuspend() {
        change(.host) { $0.manualSuspension = nil }
    }

    // MARK: System events

    /// Applies a system event. Returns `false` if it changed nothing because it did not apply (an
    /// interruption end without a beginning, for instance).
    @discardableResult
    mutating func handle(_ event: SystemEvent) -> Bool {
        let cause = EventCause.system(event)
        switch event {
        case .interruptionBegan:
            change(cause) { state in
                state.interruption = .interrupted
                state.emit(.interruptionBegan, cause)
            }
        case .interruptionEnded(let shouldResume):
            guard interruption == .interrupted else { return false }
            change(cause) { state in
                state.interruption = shouldResume ? .none : .endedWaitingForHost
                state.emit(.interruptionEnded(shouldResume: shouldResume), cause)
            }
        case .routeChanged(let route):
            change(cause) { state in
                if let output = route.currentOutput { state.currentRoute = output }
                if route.reason == .oldDeviceUnavailable { state.hostWantsPlay = false }
                state.emit(.routeChanged(route), cause)
            }
        case .didEnterBackground:
            guard !inBackground else { return false }
            change(cause) { state in
                state.inBackground = true
                state.emit(.backgroundChanged(isInBackground: true), cause)
            }
        case .willEnterForeground:
            guard inBackground || interruption == .interrupted else { return false }
            change(cause) { state in
                if state.inBackground {
                    state.inBackground = false
                    state.emit(.backgroundChanged(isInBackground: false), cause)
                }
                // An interruption whose end never came is lifted when the app comes back.
                if state.interruption == .interrupted {
                    state.interruption = .none
                    state.emit(.interruptionEnded(shouldResume: true), cause)
                }
            }
        case .otherAudioStarted, .otherAudioStopped:
            let playing = event == .otherAudioStarted
            guard playing != otherAudioPlaying else { return false }
            change(cause) { state in
                state.otherAudioPlaying = playing
                state.emit(.otherAudioChanged(isPlaying: playing), cause)
            }
        }
        return true
    }

    // MARK: Streams

    mutating func addStream(
        _ descriptor: StreamDescriptor, isMain: Bool, owner: String?, volume: Float
    ) throws(SessionError) -> StreamID {
        if isMain, let existing = streams.first(where: \.isMain) {
            throw SessionError(
                code: .mainStreamAlreadyOpen,
                message: "a main stream (\(existing.descriptor.name), \(existing.id)) is already open: "
                    + "close it before opening \(descriptor.name), or open \(descriptor.name) as an overlay stream")
        }
        let id = StreamID(rawValue: nextStream)
        nextStream += 1
        streams.append(StreamRecord(id: id, descriptor: descriptor, isMain: isMain, owner: owner, volume: volume))
        return id
    }

    /// Reports a stream the engine opened.
    mutating func streamOpened(_ id: StreamID) {
        guard let record = streams.first(where: { $0.id == id }) else { return }
        emit(.streamOpened(info(of: record)), record.cause)
    }

    func info(of record: StreamRecord) -> StreamInfo {
        let target = target(for: record)
        return StreamInfo(
            id: record.id, descriptor: record.descriptor, isMain: record.isMain, owner: record.owner,
            volume: record.isMain ? hostVolume : record.volume, gain: target.gain, isPaused: target.paused)
    }

    /// Removes a stream; returns its last info, or `nil` if it was not open.
    mutating func removeStream(_ id: StreamID, emitting: Bool) -> StreamInfo? {
        guard let index = streams.firstIndex(where: { $0.id == id }) else { return nil }
        let record = streams[index]
        let info = info(of: record)
        change(record.cause) { state in
            state.streams.remove(at: index)
            if emitting { state.emit(.streamClosed(info), record.cause) }
        }
        return info
    }

    mutating func setStreamVolume(_ id: StreamID, _ volume: Float) -> Bool {
        guard let index = streams.firstIndex(where: { $0.id == id }) else { return false }
        if streams[index].isMain {
            setHostVolume(volume)
            return true
        }
        let old = streams[index].volume
        let cause = streams[index].cause
        change(cause) { state in
            state.streams[index].volume = volume
            if old != volume { state.emit(.streamVolumeChanged(id, from: old, to: volume), cause) }
        }
        return true
    }

    // MARK: Engine reports

    mutating func handleEngineEvent(_ event: EngineEvent) {
        let cause = EventCause.engine(event)
        switch event {
        case .system(let system):
            handle(system)
        case .externalVolumeChange(let stream, let volume):
            if stream == mainStreamID {
                setHostVolume(volume, cause: cause)
            } else if let index = streams.firstIndex(where: { $0.id == stream }) {
                let old = streams[index].volume
                change(cause) { state in
                    state.streams[index].volume = volume
                    state.emit(.streamVolumeChanged(stream, from: old, to: volume), cause)
                }
            }
        case .streamFault(let stream, let reason):
            emit(.streamFault(stream, reason: reason), cause)
        case .connectionLost(let reason):
            engineConnected = false
            emit(.connectionLost(reason: reason), cause)
        case .reconnected(let attempts, let downtime):
            engineConnected = true
            emit(.reconnected(attempts: attempts, downtime: downtime), cause)
        case .quantumChanged(let frames):
            quantum = frames
            emit(.quantumChanged(frames: frames), cause)
        }
    }

    mutating func close() {
        guard !isClosed else { return }
        isClosed = true
        emit(.closed, .host)
    }
}
