/// The coordinator's state: a plain value with no threads, locks or engine in it.
///
/// Every input (a lease, a host call, a system or engine event, the outcome of an engine call) is a
/// mutating method that returns the ``SessionEffect``s that must follow, in order: events to deliver,
/// and the engine and stream calls that bring the engine to what the state now derives. What the
/// engine should have (``engineTarget``) is derived from the live leases and the host's settings,
/// never pushed and popped, so no order of releases and no volume change can leave a stale value
/// behind (as Chromium's audio focus manager recomputes from its whole stack, and PulseAudio's role
/// ducking keeps the duck as a separate factor on top of the stream volume). The state also keeps what
/// it has told the engine (``applied``), so each input yields only the calls that change something.
///
/// ``SharedSession`` holds it in a lock, performs the effects in order after releasing it, and feeds
/// the outcome of an activation or a capture start back in.
///
/// Every operation costs the same however many leases are held: leases and ducks are kept by id, with
/// counts per session type and per duck level beside them.
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
        /// What the engine has been told for it, once the engine has opened it: the gain and play state
        /// it was last given (`nil`: not open on the engine). Kept in the record, not in a dictionary by
        /// id, so settling a stream after an input hashes nothing.
        var applied: StreamTarget? = nil

        var cause: EventCause { owner.map { .unit(owner: $0) } ?? .host }
    }

    struct StreamTarget: Sendable, Hashable {
        var gain: Float
        var paused: Bool
        /// The voice-activity duck on top of `gain`: the factor to go down by while any source is
        /// active. `nil`: none.
        var activity: ActivityDuck? = nil
    }

    /// A voice-activity duck as one stream's renderer applies it.
    struct ActivityDuck: Sendable, Hashable {
        /// The stream's gain while a source is active: the host's volume × the duck's level. The
        /// renderer never goes above the stream's own gain, so with other ducks the lowest level wins.
        var gain: Float
        var sources: [ActivitySource]
    }

    /// What the engine should have, derived from the state.
    struct EngineTarget: Sendable, Hashable {
        var configuration: SessionConfiguration?
        var suspended: Bool
        var streams: [StreamID: StreamTarget]
    }

    /// What the engine has been told.
    struct Applied: Sendable, Hashable {
        /// The configuration the engine last accepted.
        var configuration: SessionConfiguration?
        var capturing = false
        var suspended = false
        // The streams' applied targets are in their records (`StreamRecord.applied`).
    }

    /// An activation whose outcome the state waits for.
    private struct Activation: Sendable, Hashable {
        let configuration: SessionConfiguration
        /// The cause of the change that asked for it, given to the events its outcome produces.
        let cause: EventCause
        /// The configuration that was active before, to go back to if the capture cannot start.
        let previous: SessionConfiguration?
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
    private var leaseRecords: [LeaseID: LeaseRecord] = [:]
    /// Live voice session leases, granted or waiting (the generic ones are the rest of
    /// `leaseRecords`): a counter, not a dictionary per type, so no input hashes for it.
    private var voiceLeases = 0
    /// Leases waiting for their configuration, oldest first.
    private var waiting: [LeaseID] = []
    private var duckRecords: [LeaseID: DuckInfo] = [:]
    /// Live ducks per effective level (a duck with no level counts at the policy's).
    private var duckLevels: [Float: Int] = [:]
    private var pauseRequests = 0
    /// Live voice-activity ducks: what each follows and its effective level.
    private var activityDucks: [LeaseID: (source: ActivitySource, level: Float)] = [:]
    /// Deadlines of the ducks that have one.
    private var deadlines: [LeaseID: ContinuousClock.Instant] = [:]
    private(set) var hostVolume: Float = 1
    private(set) var hostWantsPlay = true
    /// The host pressed play while pause requests were live; lasts until the next pause request.
    private(set) var hostOverridesPause = false
    private(set) var isInterrupted = false
    /// An interruption ended without `shouldResume` and the host has not pressed play since. A later
    /// interruption that ends with `shouldResume` does not lift it: only the host's play does.
    private(set) var waitsForHost = false
    private(set) var inBackground = false
    /// A manual `suspend(renderAnyway:)`: `nil` when not suspended by hand.
    private(set) var manualSuspension: ManualSuspension?
    private(set) var otherAudioPlaying = false
    private(set) var currentRoute: String?
    private(set) var streams: [StreamRecord] = []
    private(set) var applied = Applied()
    private var activation: Activation?
    private(set) var isClosed = false
    private(set) var engineConnected = true
    private(set) var quantum = 0
    /// Why leases waiting for a configuration were refused, until their acquirer collects it.
    private var refusals: [LeaseID: SessionError] = [:]
    private var nextLease: UInt64 = 1
    private var nextStream: UInt64 = 1
    /// The effects of the input being handled, returned when it is done.
    private var effects: [SessionEffect] = []
    /// Whether inputs emit their events. ``SharedSession`` turns it off for the inputs no one would
    /// receive the events of (no subscriber, delegate or input observer), so they build none; every
    /// other effect is the same either way.
    var emitsEvents = true

    struct ManualSuspension: Sendable, Hashable {
        var renderAnyway: Bool
    }

    init(policy: SessionPolicy) {
        self.policy = policy
    }

    // MARK: Derived

    /// The live session leases (granted or waiting), oldest first.
    var leases: [LeaseRecord] { leaseRecords.values.sorted { $0.info.id < $1.info.id } }

    /// The live duck and pause requests, oldest first.
    var ducks: [DuckInfo] { duckRecords.values.sorted { $0.id < $1.id } }

    /// The configuration the engine last accepted.
    var appliedConfiguration: SessionConfiguration? { applied.configuration }

    var interruption: InterruptionPhase {
        if isInterrupted { return .interrupted }
        return waitsForHost ? .endedWaitingForHost : .none
    }

    /// Voice if any voice lease is live, else generic if any generic lease is, else inactive.
    var requestedConfiguration: SessionConfiguration? {
        if voiceLeases > 0 { return policy.voiceConfiguration }
        if !leaseRecords.isEmpty { return policy.genericConfiguration }
        return nil
    }

    /// Whether the engine has the configuration asked for: `voice` true for the voice configuration,
    /// false for the generic one, `nil` for none (inactive). Compared in place: building
    /// ``requestedConfiguration`` copies a configuration, retaining its strings and sets, every input.
    func isApplied(requested voice: Bool?) -> Bool {
        guard let voice else { return applied.configuration == nil }
        guard let active = applied.configuration else { return false }
        return active == (voice ? policy.voiceConfiguration : policy.genericConfiguration)
    }

    /// The lowest level among live ducks, and the other-audio duck if the policy asks for it; ducks
    /// never compound.
    var duckFactor: Float { isMainExempt ? 1 : staticDuckFactor }

    private var staticDuckFactor: Float {
        var factor: Float = 1
        for level in duckLevels.keys { factor = min(factor, level) }
        if policy.duckWhenOtherAudioPlays, otherAudioPlaying { factor = min(factor, policy.duckLevel) }
        return factor
    }

    var pauseRequested: Bool { pauseRequests > 0 }

    /// Whether the host marked the main stream exempt from units' requests.
    // These read the main stream's record in place (`contains`, `firstIndex`): `first(where:)` would
    // copy the record, retaining and releasing its strings, several times per input.
    var isMainExempt: Bool { streams.contains { $0.isMain && $0.descriptor.isExempt } }

    var isMainPaused: Bool {
        !hostWantsPlay || (pauseRequested && !hostOverridesPause && !isMainExempt) || waitsForHost
    }

    /// The earliest deadline of a live duck, when ``expire(at:)`` has something to do.
    var nextDeadline: ContinuousClock.Instant? { deadlines.values.min() }

    /// The voice-activity duck the main stream's renderer applies, if any.
    var mainActivityDuck: ActivityDuck? {
        guard !activityDucks.isEmpty, !isMainExempt else { return nil }
        var level: Float = 1
        var sources: [ActivitySource] = []
        for id in activityDucks.keys.sorted() {
            let duck = activityDucks[id]!
            if case .stream(let followed) = duck.source, !streams.contains(where: { $0.id == followed }) { continue }
            level = min(level, duck.level)
            if !sources.contains(duck.source) { sources.append(duck.source) }
        }
        guard !sources.isEmpty else { return nil }
        return ActivityDuck(gain: hostVolume * level, sources: sources)
    }

    /// The configuration whose background behaviour applies: the active one, else the generic one.
    private var governingConfiguration: SessionConfiguration {
        if let active = applied.configuration { return active }
        return policy.genericConfiguration
    }

    var isSuspended: Bool {
        if isInterrupted { return true }
        if let manualSuspension, !manualSuspension.renderAnyway { return true }
        if inBackground {
            guard let active = applied.configuration else { return true }
            return !active.category.rendersInBackground || policy.suspendInBackground
        }
        return false
    }

    /// Suspended by hand with `renderAnyway`: sources keep running, output is muted.
    private var isMutedByHand: Bool { manualSuspension?.renderAnyway == true }

    var isBackgroundMusicMuted: Bool { otherAudioPlaying && governingConfiguration.mixesWithOthers }

    var mainGain: Float {
        guard !isMutedByHand else { return 0 }
        if isBackgroundMusicMuted, streams.contains(where: { $0.isMain && $0.descriptor.isBackgroundMusic }) {
            return 0
        }
        return hostVolume * duckFactor
    }

    func target(for stream: StreamRecord) -> StreamTarget {
        StreamTargets(self).target(for: stream)
    }

    /// What every stream's target depends on besides the stream, read once: ``settle(_:retryingConfiguration:)``
    /// reads it before it changes anything, so its loop calls no method on the whole state (for which the
    /// optimiser copies all of it, every stream of every input).
    struct StreamTargets {
        let main: StreamTarget
        let mutedByHand: Bool
        let backgroundMusicMuted: Bool

        init(_ state: borrowing SessionState) {
            main = StreamTarget(gain: state.mainGain, paused: state.isMainPaused, activity: state.mainActivityDuck)
            mutedByHand = state.isMutedByHand
            backgroundMusicMuted = state.isBackgroundMusicMuted
        }

        func target(for stream: StreamRecord) -> StreamTarget {
            if stream.isMain { return main }
            let muted = mutedByHand || (backgroundMusicMuted && stream.descriptor.isBackgroundMusic)
            return StreamTarget(gain: muted ? 0 : stream.volume, paused: false)
        }
    }

    var engineTarget: EngineTarget {
        EngineTarget(
            configuration: requestedConfiguration,
            suspended: isSuspended,
            streams: Dictionary(uniqueKeysWithValues: streams.map { ($0.id, target(for: $0)) }))
    }

    var mainStreamID: StreamID? { streams.firstIndex(where: \.isMain).map { streams[$0].id } }

    func snapshot(at now: ContinuousClock.Instant) -> SessionSnapshot {
        SessionSnapshot(
            activeConfiguration: applied.configuration,
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

    // MARK: Effects

    /// Hands over the effects built so far. The buffer itself goes to the caller (no copy); the next
    /// input builds in the one ``reuse(_:)`` lends, or in a new one.
    private mutating func takeEffects() -> [SessionEffect] {
        var taken: [SessionEffect] = []
        swap(&taken, &effects)
        return taken
    }

    /// Lends the state an empty buffer to build the next input's effects in: a caller that gives back
    /// the buffer of its last effects this way (``SharedSession`` keeps one per session) makes inputs
    /// that allocate nothing for their effects. `buffer` receives what the state had instead.
    mutating func reuse(_ buffer: inout [SessionEffect]) {
        buffer.removeAll(keepingCapacity: true)
        if effects.isEmpty, effects.capacity < buffer.capacity { swap(&effects, &buffer) }
    }

    /// Appends an event, unless events are off: then the event (and the lease or duck record copied
    /// into it) is not even built, hence the autoclosures.
    private mutating func emit(_ kind: @autoclosure () -> SessionEvent.Kind, _ cause: @autoclosure () -> EventCause) {
        guard emitsEvents else { return }
        effects.append(.emit(SessionEvent(kind(), cause: cause())))
    }

    /// Runs a mutation and emits an event for every observable value it changed, with `cause`.
    private mutating func change(_ cause: EventCause, _ body: (inout SessionState) -> Void) {
        let before = observed
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

    /// Runs an input: its mutation (with the events of what it changed), then the engine calls that
    /// bring the engine to the new target. Returns everything, in order.
    private mutating func input(_ cause: EventCause, _ body: (inout SessionState) -> Void) -> [SessionEffect] {
        change(cause, body)
        settle(cause)
        return takeEffects()
    }

    /// Appends the engine calls that bring the engine from ``applied`` to ``engineTarget``: the
    /// configuration first (an activation waits for its outcome before the streams follow), then
    /// suspension, then each stream's gain (ramped down or up by the policy's fades) and play state.
    private mutating func settle(_ cause: EventCause, retryingConfiguration: Bool = true) {
        guard !isClosed, case .none = activation else { return }
        if retryingConfiguration, !isApplied(requested: leaseRecords.isEmpty ? nil : voiceLeases > 0) {
            guard let requested = requestedConfiguration else {
                if applied.capturing {
                    effects.append(.stopCapture)
                    applied.capturing = false
                }
                effects.append(.deactivate(notifyingOthers: policy.notifyOthersOnDeactivation))
                change(cause) { state in
                    state.applied.configuration = nil
                    let notified = state.policy.notifyOthersOnDeactivation
                    state.emit(.deactivated(notifiedOthers: notified), cause)
                }
                settle(cause)
                return
            }
            activation = Activation(configuration: requested, cause: cause, previous: applied.configuration)
            effects.append(.activate(requested))
            return
        }
        let suspended = isSuspended
        let targets = StreamTargets(self)
        if suspended != applied.suspended {
            effects.append(.setSuspended(suspended))
            applied.suspended = suspended
        }
        for index in streams.indices {
            let id = streams[index].id
            guard let current = streams[index].applied else { continue }
            let wanted = targets.target(for: streams[index])
            if wanted.gain != current.gain {
                let ramp = wanted.gain < current.gain ? policy.fadeDown : policy.fadeUp
                effects.append(.setGain(id, wanted.gain, ramp: ramp))
            }
            if wanted.paused != current.paused { effects.append(.setPaused(id, wanted.paused)) }
            if wanted.activity != current.activity {
                effects.append(
                    .setActivityDuck(id, gain: wanted.activity?.gain ?? 1, following: wanted.activity?.sources ?? []))
            }
            // Stored only when it changed: most inputs (a lease, a duck at a level already applied)
            // change no stream.
            if wanted != current { streams[index].applied = wanted }
        }
    }

    // MARK: Leases

    /// Adds a session lease. It is granted at once if the configuration it needs is already active;
    /// otherwise the effects activate it, and the outcome grants it (or refuses it).
    ///
    /// A voice lease for a unit that may not take the voice session is refused (the error is returned
    /// and a `requestRejected` event emitted) or granted as generic, as its limits say.
    mutating func acquire(
        _ requested: AudioSessionType, owner: String, at now: ContinuousClock.Instant
    ) -> (LeaseID, [SessionEffect]) {
        let limits = policy.limits(for: owner)
        var type = requested
        var limited = false
        if requested == .voice, !limits.mayTakeVoice {
            if limits.excess == .refuse {
                let error = SessionError(
                    code: .limitExceeded,
                    message: "\(owner) may not take the voice session (its unit limits say mayTakeVoice: false): "
                        + "ask for a generic session, or change the host's SessionPolicy.unitLimits")
                let id = LeaseID(rawValue: nextLease)
                nextLease += 1
                refusals[id] = error
                emit(.requestRejected(error), .unit(owner: owner))
                return (id, takeEffects())
            }
            type = .generic
            limited = true
        }
        let id = LeaseID(rawValue: nextLease)
        nextLease += 1
        let info = LeaseInfo(id: id, owner: owner, type: type, acquiredAt: now)
        let effects = input(.sessionLease(id, owner: owner)) { state in
            if limited {
                state.emit(.limitApplied(owner: owner, limit: .mayNotTakeVoice), .sessionLease(id, owner: owner))
            }
            if type == .voice { state.voiceLeases += 1 }
            // Once this lease is in, `requestedConfiguration` is the voice or the generic one.
            if state.waiting.isEmpty, state.isApplied(requested: state.voiceLeases > 0) {
                // Its configuration is active and no one waits before it: granted at once, as
                // `grantWaiting()` would grant it, without the detour through `waiting`.
                state.leaseRecords[id] = LeaseRecord(info: info, granted: true)
                state.emit(.leaseAcquired(info), .sessionLease(id, owner: owner))
                return
            }
            state.leaseRecords[id] = LeaseRecord(info: info, granted: false)
            state.waiting.append(id)
            if state.requestedConfiguration == state.applied.configuration {
                state.grantWaiting()
            }
        }
        return (id, effects)
    }

    /// The type a live, granted lease holds (a unit's limits may have made a voice request generic).
    func grantedType(_ id: LeaseID) -> AudioSessionType? {
        guard let record = leaseRecords[id], record.granted else { return nil }
        return record.info.type
    }

    /// Whether a session lease is live, granted or waiting.
    func isLeaseLive(_ id: LeaseID) -> Bool { leaseRecords[id] != nil }

    /// Whether a lease is live and granted.
    func isGranted(_ id: LeaseID) -> Bool { leaseRecords[id]?.granted == true }

    /// Removes a session lease; nothing happens (no effects) if it is not live.
    mutating func release(_ id: LeaseID, dropped: Bool) -> [SessionEffect] {
        releaseLease(id, dropped: dropped).effects
    }

    /// Removes a session lease, and says whether it was live (with events off, a live lease's release
    /// may have no effects).
    mutating func releaseLease(_ id: LeaseID, dropped: Bool) -> (released: Bool, effects: [SessionEffect]) {
        guard let info = leaseRecords[id]?.info else { return (false, []) }
        let effects = input(.sessionLease(id, owner: info.owner)) { state in
            state.removeLease(id)
            state.emit(dropped ? .leaseDropped(info) : .leaseReleased(info), .sessionLease(id, owner: info.owner))
        }
        return (true, effects)
    }

    private mutating func removeLease(_ id: LeaseID) {
        guard let record = leaseRecords.removeValue(forKey: id) else { return }
        if record.info.type == .voice { voiceLeases -= 1 }
        if !record.granted { waiting.removeAll { $0 == id } }
    }

    /// Adds a duck or pause request within its unit's limits. Returns the lease's id, or the error
    /// when a limit refuses it (a `requestRejected` event is among the effects then).
    mutating func duck(
        _ request: DuckRequest, at now: ContinuousClock.Instant
    ) -> (result: Result<LeaseID, SessionError>, effects: [SessionEffect]) {
        let owner = request.owner
        let limits = policy.limits(for: owner)
        var style = request.style
        var applied: [UnitLimit] = []
        func refuse(_ limit: UnitLimit, _ fix: String) -> (Result<LeaseID, SessionError>, [SessionEffect]) {
            let error = SessionError(
                code: .limitExceeded, message: "\(owner) asked for \(request.style) beyond its limit (\(limit)): \(fix)"
            )
            emit(.requestRejected(error), .unit(owner: owner))
            return (.failure(error), takeEffects())
        }
        if case .followActivity(.stream(let followed), _) = style, !streams.contains(where: { $0.id == followed }) {
            let error = SessionError(
                code: .unknownStream,
                message: "\(owner) asked to duck while \(followed) is active, but it is not open: open the stream "
                    + "first, or follow .voiceInput")
            emit(.requestRejected(error), .unit(owner: owner))
            return (.failure(error), takeEffects())
        }
        if style == .pause, !limits.mayPauseMain {
            if limits.excess == .refuse {
                return refuse(.mayNotPauseMain, "ask for a duck instead, or change the host's SessionPolicy.unitLimits")
            }
            style = .duck(level: max(policy.duckLevel, limits.deepestDuckLevel))
            applied.append(.mayNotPauseMain)
        }
        // The policy's level is read into a local first, here and below: `level ?? policy.duckLevel`
        // captures `self` in the `??` autoclosure, and the optimiser copies the whole state for it.
        let policyLevel = policy.duckLevel
        if case .some(let level) = style.requestedLevel, (level ?? policyLevel) < limits.deepestDuckLevel {
            let deepest = limits.deepestDuckLevel
            if limits.excess == .refuse {
                return refuse(.deepestDuckLevel(deepest), "ask for a level of \(deepest) or more")
            }
            switch style {
            case .followActivity(let source, _): style = .followActivity(source, level: deepest)
            default: style = .duck(level: deepest)
            }
            applied.append(.deepestDuckLevel(deepest))
        }
        var hold = request.maximumHold
        if let maximum = limits.maximumHold, hold.map({ $0 > maximum }) ?? true {
            hold = maximum
            applied.append(.maximumHold(maximum))
        }
        if isMainExempt, let main = mainStreamID { applied.append(.exemptStream(main)) }
        let id = LeaseID(rawValue: nextLease)
        nextLease += 1
        let deadline = hold.map { now + $0 }
        let info = DuckInfo(
            id: id, owner: owner, style: style, acquiredAt: now, deadline: deadline, appliedLimits: applied)
        let effects = input(.duckLease(id, owner: owner)) { state in
            for limit in applied { state.emit(.limitApplied(owner: owner, limit: limit), .duckLease(id, owner: owner)) }
            state.emit(.duckAcquired(info), .duckLease(id, owner: owner))
            switch style {
            case .pause:
                state.hostOverridesPause = false
                state.pauseRequests += 1
            case .duck(let level):
                state.duckLevels[level ?? policyLevel, default: 0] += 1
            case .followActivity(let source, let level):
                state.activityDucks[id] = (source, level ?? policyLevel)
            }
            state.duckRecords[id] = info
            if let deadline { state.deadlines[id] = deadline }
        }
        return (.success(id), effects)
    }

    /// Removes a duck or pause request; nothing happens (no effects) if it is not live.
    mutating func releaseDuck(_ id: LeaseID, dropped: Bool) -> [SessionEffect] {
        releaseLiveDuck(id, dropped: dropped).effects
    }

    /// Removes a duck or pause request, and says whether it was live.
    mutating func releaseLiveDuck(_ id: LeaseID, dropped: Bool) -> (released: Bool, effects: [SessionEffect]) {
        guard let info = duckRecords[id] else { return (false, []) }
        let effects = input(.duckLease(id, owner: info.owner)) { state in
            state.removeDuck(info)
            state.emit(dropped ? .duckDropped(info) : .duckReleased(info), .duckLease(id, owner: info.owner))
        }
        return (true, effects)
    }

    /// Releases every duck whose deadline has come, as if its holder had, with a `duckExpired` event.
    mutating func expire(at now: ContinuousClock.Instant) -> [SessionEffect] {
        let due = deadlines.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
        guard !due.isEmpty else { return [] }
        var first: EventCause?
        for id in due {
            guard let info = duckRecords[id] else { continue }
            let cause = EventCause.duckLease(id, owner: info.owner)
            first = first ?? cause
            change(cause) { state in
                state.removeDuck(info)
                state.emit(.duckExpired(info), cause)
            }
        }
        if let first { settle(first) }
        return takeEffects()
    }

    private mutating func removeDuck(_ info: DuckInfo) {
        duckRecords[info.id] = nil
        deadlines[info.id] = nil
        switch info.style {
        case .pause:
            pauseRequests -= 1
        case .duck(let level):
            let policyLevel = policy.duckLevel
            let level = level ?? policyLevel
            let remaining = duckLevels[level, default: 1] - 1
            duckLevels[level] = remaining > 0 ? remaining : nil
        case .followActivity:
            activityDucks[info.id] = nil
        }
        if !pauseRequested { hostOverridesPause = false }
    }

    /// A live duck or pause request, as the snapshot shows it.
    func duckInfo(_ id: LeaseID) -> DuckInfo? { duckRecords[id] }

    /// Whether a duck or pause request is live.
    func isDuckLive(_ id: LeaseID) -> Bool { duckRecords[id] != nil }

    mutating func noteIgnoredRelease(owner: String, what: String, cause: EventCause) -> [SessionEffect] {
        emit(.releaseIgnored(owner: owner, what: what), cause)
        return takeEffects()
    }

    mutating func noteUnitReleased(owner: String, reason: String) -> [SessionEffect] {
        emit(.unitReleased(owner: owner, reason: reason), .unit(owner: owner))
        return takeEffects()
    }

    mutating func noteRejected(_ error: SessionError) -> [SessionEffect] {
        emit(.requestRejected(error), .host)
        return takeEffects()
    }

    // MARK: Outcomes of engine calls

    private mutating func grantWaiting() {
        for id in waiting {
            // A lookup and a plain store: the optional-chained `leaseRecords[id]?.granted = true` runs
            // through the dictionary's modify coroutines, whose frames are allocated on the heap.
            guard var record = leaseRecords[id] else { continue }
            record.granted = true
            leaseRecords[id] = record
            emit(.leaseAcquired(record.info), .sessionLease(id, owner: record.info.owner))
        }
        waiting.removeAll(keepingCapacity: true)
    }

    /// The engine accepted the configuration of the ``SessionEffect/activate(_:)`` just performed.
    /// The capture starts next if the configuration records input (and stops if it does not);
    /// otherwise the waiting leases are granted and the change is reported.
    mutating func activationSucceeded() -> [SessionEffect] {
        guard let activation else { return [] }
        let configuration = activation.configuration
        if configuration.category.recordsInput, !applied.capturing {
            effects.append(.startCapture)
            return takeEffects()
        }
        if !configuration.category.recordsInput, applied.capturing {
            effects.append(.stopCapture)
            applied.capturing = false
        }
        complete(activation)
        return takeEffects()
    }

    /// The capture of a recording configuration started: the switch is complete.
    mutating func captureStarted() -> [SessionEffect] {
        guard let activation else { return [] }
        applied.capturing = true
        complete(activation)
        return takeEffects()
    }

    private mutating func complete(_ activation: Activation) {
        self.activation = nil
        let configuration = activation.configuration
        let previous = applied.configuration
        let cause = activation.cause
        change(cause) { state in
            state.applied.configuration = configuration
            if state.requestedConfiguration == configuration { state.grantWaiting() }
            if let previous {
                state.emit(.configurationChanged(from: previous, to: configuration), cause)
            } else {
                state.emit(.activated(configuration), cause)
            }
        }
        settle(cause)
    }

    /// The engine refused the configuration of the ``SessionEffect/activate(_:)`` just performed: the
    /// leases waiting for it are refused and removed; everything else stays as it was.
    mutating func activationFailed(_ error: SessionError) -> [SessionEffect] {
        guard let activation else { return [] }
        refuse(activation, message: error.message)
        return takeEffects()
    }

    /// The capture of a recording configuration could not start: the engine goes back to the
    /// configuration it had, and the switch is refused like an activation.
    mutating func captureFailed(_ error: SessionError) -> [SessionEffect] {
        guard let activation else { return [] }
        effects.append(.restore(activation.previous))
        refuse(activation, message: error.message)
        return takeEffects()
    }

    private mutating func refuse(_ activation: Activation, message: String) {
        self.activation = nil
        let configuration = activation.configuration
        let cause = activation.cause
        let refused = waiting.filter { id in
            leaseRecords[id].map { policy.configuration(for: $0.info.type) == configuration } ?? false
        }
        change(cause) { state in
            for id in refused {
                guard let info = state.leaseRecords[id]?.info else { continue }
                state.removeLease(id)
                state.refusals[id] = SessionError(
                    code: .activationRefused,
                    message: "the engine refused to activate \(configuration) for the \(info.type) session "
                        + "of \(info.owner): \(message); fall back to another engine or retry later")
            }
            state.emit(.activationFailed(configuration, message: message), cause)
        }
        // With no lease refused, asking again at once would only be refused again: the next input retries.
        settle(cause, retryingConfiguration: !refused.isEmpty)
    }

    /// Takes the reason a lease was refused, if it was. A lease still waiting after its effects were
    /// performed (the session was closed, or the engine refused a switch no lease could be blamed for)
    /// is removed and refused too.
    mutating func takeRefusal(_ id: LeaseID) -> SessionError? {
        if let refusal = refusals.removeValue(forKey: id) { return refusal }
        guard let record = leaseRecords[id], !record.granted else { return nil }
        let owner = record.info.owner
        removeLease(id)
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

    // MARK: Host

    mutating func setHostVolume(_ volume: Float) -> [SessionEffect] {
        input(.host) { $0.hostVolume = volume }
    }

    mutating func play() -> [SessionEffect] {
        input(.host) { state in
            state.hostWantsPlay = true
            if state.pauseRequested { state.hostOverridesPause = true }
            if state.isInterrupted || state.waitsForHost {
                state.isInterrupted = false
                state.waitsForHost = false
                state.emit(.interruptionEnded(shouldResume: true), .host)
            }
        }
    }

    mutating func pause() -> [SessionEffect] {
        input(.host) { $0.hostWantsPlay = false }
    }

    mutating func suspend(renderAnyway: Bool) -> [SessionEffect] {
        input(.host) { $0.manualSuspension = ManualSuspension(renderAnyway: renderAnyway) }
    }

    mutating func wakeFromSuspend() -> [SessionEffect] {
        input(.host) { $0.manualSuspension = nil }
    }

    // MARK: System events

    /// Applies a system event. Returns `applied: false` if it changed nothing because it did not
    /// apply (an interruption end without a beginning, for instance).
    mutating func handle(_ event: SystemEvent) -> (applied: Bool, effects: [SessionEffect]) {
        let cause = EventCause.system(event)
        switch event {
        case .interruptionBegan:
            return (
                true,
                input(cause) { state in
                    state.isInterrupted = true
                    state.emit(.interruptionBegan, cause)
                }
            )
        case .interruptionEnded(let shouldResume):
            guard isInterrupted else { return (false, input(cause) { _ in }) }
            return (
                true,
                input(cause) { state in
                    state.isInterrupted = false
                    if !shouldResume { state.waitsForHost = true }
                    state.emit(.interruptionEnded(shouldResume: shouldResume), cause)
                }
            )
        case .routeChanged(let route):
            return (
                true,
                input(cause) { state in
                    if let output = route.currentOutput { state.currentRoute = output }
                    if route.reason == .oldDeviceUnavailable { state.hostWantsPlay = false }
                    state.emit(.routeChanged(route), cause)
                }
            )
        case .didEnterBackground:
            guard !inBackground else { return (false, input(cause) { _ in }) }
            return (
                true,
                input(cause) { state in
                    state.inBackground = true
                    state.emit(.backgroundChanged(isInBackground: true), cause)
                }
            )
        case .willEnterForeground:
            guard inBackground || isInterrupted else { return (false, input(cause) { _ in }) }
            return (
                true,
                input(cause) { state in
                    if state.inBackground {
                        state.inBackground = false
                        state.emit(.backgroundChanged(isInBackground: false), cause)
                    }
                    // An interruption whose end never came is lifted when the app comes back.
                    if state.isInterrupted {
                        state.isInterrupted = false
                        state.emit(.interruptionEnded(shouldResume: true), cause)
                    }
                }
            )
        case .otherAudioStarted, .otherAudioStopped:
            let playing = event == .otherAudioStarted
            guard playing != otherAudioPlaying else { return (false, input(cause) { _ in }) }
            return (
                true,
                input(cause) { state in
                    state.otherAudioPlaying = playing
                    state.emit(.otherAudioChanged(isPlaying: playing), cause)
                }
            )
        }
    }

    // MARK: Streams

    /// Adds a stream before the engine opens it; returns its id and the gain and play state it must
    /// start with.
    ///
    /// - Throws: `sessionClosed` after ``close()``, `mainStreamAlreadyOpen` for a second main stream.
    mutating func addStream(
        _ descriptor: StreamDescriptor, isMain: Bool, owner: String?, volume: Float
    ) throws(SessionError) -> (StreamID, StreamTarget) {
        guard !isClosed else {
            throw SessionError(
                code: .sessionClosed,
                message: "the session is closed, so \(descriptor.name) cannot be opened: make a new SharedSession")
        }
        if isMain, let existing = streams.first(where: \.isMain) {
            throw SessionError(
                code: .mainStreamAlreadyOpen,
                message: "a main stream (\(existing.descriptor.name), \(existing.id)) is already open: "
                    + "close it before opening \(descriptor.name), or open \(descriptor.name) as an overlay stream")
        }
        let id = StreamID(rawValue: nextStream)
        nextStream += 1
        let record = StreamRecord(id: id, descriptor: descriptor, isMain: isMain, owner: owner, volume: volume)
        streams.append(record)
        return (id, target(for: record))
    }

    /// The engine opened a stream added by ``addStream(_:isMain:owner:volume:)`` at `target`.
    mutating func streamOpened(_ id: StreamID, at target: StreamTarget) -> [SessionEffect] {
        guard let index = streams.firstIndex(where: { $0.id == id }) else { return [] }
        streams[index].applied = target
        let record = streams[index]
        return input(record.cause) { state in
            let info = state.info(of: record)
            state.emit(.streamOpened(info), record.cause)
        }
    }

    /// The engine could not open a stream added by ``addStream(_:isMain:owner:volume:)``: it is
    /// forgotten without an event.
    mutating func streamOpenFailed(_ id: StreamID) {
        streams.removeAll { $0.id == id }
    }

    func info(of record: StreamRecord) -> StreamInfo {
        let target = target(for: record)
        return StreamInfo(
            id: record.id, descriptor: record.descriptor, isMain: record.isMain, owner: record.owner,
            volume: record.isMain ? hostVolume : record.volume, gain: target.gain, isPaused: target.paused)
    }

    /// Closes a stream: nothing happens if it is not open, or if the session was closed (which
    /// closed every stream on the engine already).
    mutating func removeStream(_ id: StreamID) -> [SessionEffect] {
        guard !isClosed, let index = streams.firstIndex(where: { $0.id == id }), streams[index].applied != nil else {
            return []
        }
        let record = streams[index]
        let info = info(of: record)
        effects.append(.closeStream(id))
        streams[index].applied = nil
        return input(record.cause) { state in
            state.streams.remove(at: index)
            state.emit(.streamClosed(info), record.cause)
        }
    }

    /// Sets a stream's own volume (the main stream's is the host's volume). Returns `found: false`
    /// (and no effects) if the stream is not open.
    mutating func setStreamVolume(_ id: StreamID, _ volume: Float) -> (found: Bool, effects: [SessionEffect]) {
        guard let index = streams.firstIndex(where: { $0.id == id }) else { return (false, []) }
        if streams[index].isMain { return (true, setHostVolume(volume)) }
        let old = streams[index].volume
        let cause = streams[index].cause
        return (
            true,
            input(cause) { state in
                state.streams[index].volume = volume
                if old != volume { state.emit(.streamVolumeChanged(id, from: old, to: volume), cause) }
            }
        )
    }

    // MARK: Engine reports

    mutating func handleEngineEvent(_ event: EngineEvent) -> [SessionEffect] {
        let cause = EventCause.engine(event)
        switch event {
        case .system(let system):
            return handle(system).effects
        case .externalVolumeChange(let stream, let volume):
            if stream == mainStreamID { return input(cause) { $0.hostVolume = volume } }
            guard let index = streams.firstIndex(where: { $0.id == stream }) else { return [] }
            let old = streams[index].volume
            return input(cause) { state in
                state.streams[index].volume = volume
                state.emit(.streamVolumeChanged(stream, from: old, to: volume), cause)
            }
        case .streamFault(let stream, let reason):
            emit(.streamFault(stream, reason: reason), cause)
            return takeEffects()
        case .connectionLost(let reason):
            engineConnected = false
            emit(.connectionLost(reason: reason), cause)
            return takeEffects()
        case .reconnected(let attempts, let downtime):
            engineConnected = true
            emit(.reconnected(attempts: attempts, downtime: downtime), cause)
            resync()
            return input(cause) { _ in }
        case .quantumChanged(let frames):
            quantum = frames
            emit(.quantumChanged(frames: frames), cause)
            return takeEffects()
        }
    }

    /// After a reconnect the engine reopened its streams from what it was last told: tell it again.
    /// A ramp, not a step: if the engine's render side kept a level other than the target across the
    /// outage, it glides there instead of clicking.
    private mutating func resync() {
        guard !isClosed else { return }
        for index in streams.indices where streams[index].applied != nil {
            let record = streams[index]
            let wanted = target(for: record)
            effects.append(.setGain(record.id, wanted.gain, ramp: policy.fadeDown))
            effects.append(.setPaused(record.id, wanted.paused))
            streams[index].applied = wanted
        }
        effects.append(.setSuspended(applied.suspended))
    }

    // MARK: Closing

    /// Closes the session: stops the capture, closes every stream and deactivates; nothing reaches the
    /// engine afterwards. The leases stay in the state (releasing them changes nothing on the engine).
    mutating func close() -> [SessionEffect] {
        guard !isClosed else { return [] }
        if applied.capturing {
            effects.append(.stopCapture)
            applied.capturing = false
        }
        for id in streams.filter({ $0.applied != nil }).map(\.id).sorted() { effects.append(.closeStream(id)) }
        for index in streams.indices { streams[index].applied = nil }
        if applied.configuration != nil {
            effects.append(.deactivate(notifyingOthers: policy.notifyOthersOnDeactivation))
            change(.host) { state in
                state.applied.configuration = nil
                let notified = state.policy.notifyOthersOnDeactivation
                state.emit(.deactivated(notifiedOthers: notified), .host)
            }
        }
        isClosed = true
        emit(.closed, .host)
        return takeEffects()
    }
}
