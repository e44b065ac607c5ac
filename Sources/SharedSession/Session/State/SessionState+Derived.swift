/// What the state derives from its parts: the requested configuration, the main stream's gain and
/// play state, the suspension, every stream's target, and the snapshot.
extension SessionState {
    /// What the engine has been told, read together.
    struct Applied: Sendable, Hashable {
        var configuration: SessionConfiguration?
        var capturing: Bool
        var suspended: Bool
    }

    var applied: Applied {
        Applied(configuration: leaseBook.applied, capturing: leaseBook.capturing, suspended: suspendedApplied)
    }

    /// The configuration the engine last accepted.
    var appliedConfiguration: SessionConfiguration? { leaseBook.applied }

    /// Voice if any voice lease is live, else generic if any generic lease is, else inactive.
    var requestedConfiguration: SessionConfiguration? { leaseBook.requested(policy) }

    var hostVolume: Float { context.hostVolume }

    var interruption: InterruptionPhase { context.phase }

    /// Whether the host marked the main stream exempt from units' requests.
    var isMainExempt: Bool { streams.isMainExempt }

    /// The lowest level among live ducks, and the other-audio duck if the policy asks for it; ducks
    /// never compound.
    var duckFactor: Float {
        guard !isMainExempt else { return 1 }
        let otherAudio = policy.duckWhenOtherAudioPlays && context.otherAudioPlaying
        return duckStack.factor(floor: otherAudio ? policy.duckLevel : nil)
    }

    var isMainPaused: Bool {
        !context.hostWantsPlay || (duckStack.pauseRequested && !duckStack.hostOverridesPause && !isMainExempt)
            || context.waitsForHost
    }

    /// The voice-activity duck the main stream's renderer applies, if any.
    var mainActivityDuck: ActivityDuck? {
        // The closure reads the streams in place; a method reference (`streams.isOpen`) would copy
        // them into a context the unoptimised build allocates, every input.
        guard duckStack.hasActivityDucks, !isMainExempt,
            let duck = duckStack.activityDuck(isOpen: { streams.isOpen($0) })
        else { return nil }
        return ActivityDuck(
            gain: context.hostVolume * duck.level, followed: duck.followed,
            volume: duck.followed.contains { $0.loudness != nil } ? context.hostVolume : 1)
    }

    var isSuspended: Bool {
        if context.isInterrupted { return true }
        if let manual = context.manualSuspension, !manual.renderAnyway { return true }
        if context.inBackground {
            guard let active = leaseBook.applied else { return true }
            return !active.category.rendersInBackground || policy.suspendInBackground
        }
        return false
    }

    /// Other apps' audio mutes the background music when the configuration whose behaviour applies
    /// (the active one, else the generic one) mixes with others.
    var isBackgroundMusicMuted: Bool {
        context.otherAudioPlaying && (leaseBook.applied ?? policy.genericConfiguration).mixesWithOthers
    }

    var mainGain: Float {
        guard !context.isMutedByHand else { return 0 }
        if isBackgroundMusicMuted, streams.main?.isBackgroundMusic == true { return 0 }
        return context.hostVolume * duckFactor
    }

    var nextDeadline: ContinuousClock.Instant? { duckStack.nextDeadline }

    var mainStreamID: StreamID? { streams.main?.id }

    /// What every stream's target depends on besides the stream, read once.
    var targets: StreamTargets {
        StreamTargets(
            main: StreamTarget(gain: mainGain, paused: isMainPaused, activity: mainActivityDuck),
            mutedByHand: context.isMutedByHand, backgroundMusicMuted: isBackgroundMusicMuted)
    }

    func target(for stream: StreamReconciler.Record) -> StreamTarget { targets.target(for: stream) }

    // MARK: Leases and ducks

    /// The type a live, granted lease holds (a unit's limits may have made a voice request generic).
    func grantedType(_ id: LeaseID) -> AudioSessionType? {
        guard let record = leaseBook.record(id), record.granted else { return nil }
        return record.info.type
    }

    func isLeaseLive(_ id: LeaseID) -> Bool { leaseBook.record(id) != nil }

    func isGranted(_ id: LeaseID) -> Bool { leaseBook.record(id)?.granted == true }

    /// Takes the reason a lease was refused, if it was (see ``LeaseBook/takeRefusal(_:closed:)``).
    mutating func takeRefusal(_ id: LeaseID) -> SessionError? { leaseBook.takeRefusal(id, closed: isClosed) }

    func isDuckLive(_ id: LeaseID) -> Bool { duckStack.info(id) != nil }

    // MARK: Snapshot

    func info(of record: StreamReconciler.Record) -> StreamInfo {
        let target = target(for: record)
        return StreamInfo(
            id: record.id, descriptor: record.descriptor, isMain: record.isMain, owner: record.owner,
            volume: record.isMain ? context.hostVolume : record.volume, gain: target.gain, isPaused: target.paused)
    }

    func snapshot(at now: ContinuousClock.Instant) -> SessionSnapshot {
        SessionSnapshot(
            activeConfiguration: leaseBook.applied,
            leases: leaseBook.leases.filter(\.granted).map(\.info),
            ducks: duckStack.ducks,
            mainVolume: context.hostVolume,
            duckFactor: duckFactor,
            mainGain: mainGain,
            hostWantsPlayback: context.hostWantsPlay,
            isMainPaused: isMainPaused,
            interruption: interruption,
            isSuspended: isSuspended,
            isInBackground: context.inBackground,
            isOtherAudioPlaying: context.otherAudioPlaying,
            secondaryAudioShouldBeSilencedHint: context.otherAudioPlaying,
            isBackgroundMusicMuted: isBackgroundMusicMuted,
            currentRoute: context.currentRoute,
            streams: streams.records.map(info(of:)),
            isEngineConnected: context.engineConnected,
            quantum: context.quantum,
            takenAt: now,
            loudnessDuck: context.mainLoudnessDuck)
    }
}
