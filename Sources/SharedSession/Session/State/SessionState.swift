/// The coordinator's state: a plain value with no threads, locks or engine in it, and one entry
/// point: every ``SessionRequest`` goes through ``apply(_:at:)``, which returns the ``SessionEffect``s
/// that must follow, in order: events to deliver, and the engine and stream calls that bring the
/// engine to what the state now derives.
///
/// It is made of four parts, each owning its data and readable alone:
/// - ``LeaseBook``: the leases, voice precedence, the activation in flight and what the engine
///   accepted → the requested configuration;
/// - ``DuckStack``: ducks and pause requests within their units' limits, deadlines, voice-activity
///   ducks → the duck factor, the pause request, the next deadline;
/// - ``PlaybackContext``: the host's volume and play, the interruption as a stored phase, the
///   background, a suspension by hand, other audio, the route, the engine's connection;
/// - ``StreamReconciler``: the open streams and what each was told → the calls that bring each to
///   its target.
///
/// The state dispatches each request to the part that handles it, emits an event for every observable
/// value the request changed (``change(_:_:)``), and settles: what the engine should have is derived
/// from the parts, never pushed and popped, so no order of releases and no volume change can leave a
/// stale value behind (as Chromium's audio focus manager recomputes from its whole stack, and
/// PulseAudio's role ducking keeps the duck as a factor of its own on top of the stream volume).
///
/// Ids are the state's to give: a request that makes a lease or a stream carries none, and the
/// state hands the id out in the step's ``Outcome``, from which the road records the request (a
/// replay compares the id the state gives with the recorded one).
struct SessionState: Sendable {
    /// What ``apply(_:at:)`` returns: the effects, and what became of the request.
    struct Step: Sendable {
        var effects: [SessionEffect]
        var outcome: Outcome
    }

    enum Outcome: Sendable, Hashable {
        /// The request applied.
        case applied
        /// The request changed nothing: a release of something not live, a system event that does
        /// not apply, a volume for a stream not open.
        case ignored
        /// An acquire made a session lease with this id (granted, waiting, or refused: ask
        /// ``takeRefusal(_:)``).
        case lease(LeaseID)
        /// A duck request was admitted with this id, as `style` (a unit's limits may have changed what
        /// it asked); `expires`: it has a deadline (``DuckInfo/deadline``). Only plain values: the
        /// road copies an outcome several times, and a payload holding a resilient type (a `DuckInfo`,
        /// a `ContinuousClock.Instant`) is copied through its runtime witnesses each time, a cost every
        /// duck and release would pay (BENCHMARKS.md measures the request path).
        case duck(LeaseID, style: DuckStyle, expires: Bool)
        /// A stream joined with this id.
        case opened(StreamID)
        /// The state took the request and refused it (a unit's limits, a followed stream not open),
        /// with a `requestRejected` event among the effects: recorded as the request, with no lease.
        case refused(SessionError)
        /// The request was refused before the state took it (a value out of range, or a refusal
        /// decided outside the state), with a `requestRejected` event among the effects: recorded
        /// as `rejected`.
        case rejected(SessionError)
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
    var leaseBook = LeaseBook()
    var duckStack = DuckStack()
    var context = PlaybackContext()
    var streams = StreamReconciler()
    /// Whether the engine was last told to suspend rendering.
    var suspendedApplied = false
    /// The duck each stream that ducks while it plays holds for its owner (see
    /// ``EngineEvent/streamPlaying(stream:playing:)``).
    var ducksOfPlayingStreams: [StreamID: LeaseID] = [:]
    var isClosed = false
    private var nextLease: UInt64 = 1
    /// The effects of the request being applied.
    var log = EffectLog()

    init(policy: SessionPolicy) {
        self.policy = policy
    }

    /// Applies one request at `now` (the time a lease or duck records as its start, and a deadline is
    /// checked against). A request whose values fail ``SessionRequest/validate()`` changes nothing: it
    /// is rejected, with a `requestRejected` event.
    mutating func apply(_ request: SessionRequest, at now: ContinuousClock.Instant) -> Step {
        let outcome: Outcome
        do {
            try request.validate()
        } catch {
            outcome = rejected(error)
            return Step(effects: log.take(), outcome: outcome)
        }
        switch request {
        case .acquire(let type, let owner): outcome = leaseRequested(type, owner: owner, at: now)
        case .releaseLease(let id, let dropped): outcome = leaseReleased(id, dropped: dropped)
        case .duck(let request): outcome = duckRequested(request, at: now)
        case .releaseDuck(let id, let dropped): outcome = duckReleased(id, dropped: dropped)
        case .expireDeadlines: outcome = deadlinesDue(at: now)
        case .setMainVolume(let volume): outcome = host { $0.context.hostVolume = volume }
        case .play:
            outcome = host { state in
                state.duckStack.hostPressedPlay()
                state.context.play(&state.log)
            }
        case .pause: outcome = host { $0.context.hostWantsPlay = false }
        case .suspend(let renderAnyway):
            outcome = host { $0.context.manualSuspension = .init(renderAnyway: renderAnyway) }
        case .wakeFromSuspend: outcome = host { $0.context.manualSuspension = nil }
        case .system(let event): outcome = systemEvent(event)
        case .engine(let event): outcome = engineEvent(event, at: now)
        case .openStream(let descriptor, let owner, let volume, let isMain):
            outcome = streamAdded(descriptor, owner: owner, volume: volume, isMain: isMain)
        case .openStreamRefused:
            streams.spendID()
            outcome = .applied
        case .closeStream(let id): outcome = streamClosed(id)
        case .setStreamVolume(let id, let volume): outcome = streamVolumeSet(id, volume)
        case .ignoredRelease(let owner, let what, let cause):
            log.emit(.releaseIgnored(owner: owner, what: what), cause)
            outcome = .applied
        case .rejected(let error): outcome = rejected(error)
        case .unitReleased(let owner, let reason):
            log.emit(.unitReleased(owner: owner, reason: reason), .unit(owner: owner))
            outcome = .applied
        case .activationOutcome(_, let refused): outcome = activationOutcome(refused: refused)
        case .captureOutcome(let refused): outcome = captureOutcome(refused: refused)
        case .close: outcome = closeSession()
        }
        return Step(effects: log.take(), outcome: outcome)
    }

    /// Takes the id the next lease gets: an acquire takes one whether it is granted or refused, a duck
    /// only once admitted.
    mutating func takeLeaseID() -> LeaseID {
        defer { nextLease += 1 }
        return LeaseID(rawValue: nextLease)
    }

    /// Refuses a request the state never took, with a `requestRejected` event.
    private mutating func rejected(_ error: SessionError) -> Outcome {
        log.emit(.requestRejected(error), .host)
        return .rejected(error)
    }

    // MARK: The road of every input: change, then settle

    /// Runs a mutation and emits an event for every observable value it changed, with `cause`.
    mutating func change(_ cause: EventCause, _ body: (inout SessionState) -> Void) {
        let before = observed
        body(&self)
        let after = observed
        if before.hostVolume != after.hostVolume {
            log.emit(.mainVolumeChanged(from: before.hostVolume, to: after.hostVolume), cause)
        }
        if before.suspended != after.suspended { log.emit(.renderingSuspended(after.suspended), cause) }
        if before.backgroundMusicMuted != after.backgroundMusicMuted {
            log.emit(.backgroundMusicMuted(after.backgroundMusicMuted), cause)
        }
        if before.mainPaused != after.mainPaused {
            log.emit(.mainPlaybackChanged(isPaused: after.mainPaused), cause)
        }
        if before.mainGain != after.mainGain {
            log.emit(.mainGainChanged(from: before.mainGain, to: after.mainGain), cause)
        }
    }

    /// An input's mutation with the events of what it changed, then the engine calls that bring the
    /// engine to the new target.
    mutating func input(_ cause: EventCause, _ body: (inout SessionState) -> Void) {
        change(cause, body)
        settle(cause)
    }

    private mutating func host(_ body: (inout SessionState) -> Void) -> Outcome {
        input(.host, body)
        return .applied
    }

    private var observed: Observed {
        Observed(
            hostVolume: context.hostVolume, mainGain: mainGain, mainPaused: isMainPaused, suspended: isSuspended,
            backgroundMusicMuted: isBackgroundMusicMuted)
    }

    /// Appends the engine calls that bring the engine from what it was told to what the state
    /// derives: the configuration first (an activation waits for its outcome before the streams
    /// follow), then suspension, then each stream's gain and play state.
    mutating func settle(_ cause: EventCause, retryingConfiguration: Bool = true) {
        guard !isClosed, leaseBook.activation == nil else { return }
        if retryingConfiguration, !leaseBook.isApplied(requestsVoice: leaseBook.requestsVoice, policy) {
            guard let requested = leaseBook.requested(policy) else {
                deactivate(cause)
                settle(cause)
                return
            }
            leaseBook.begin(.init(configuration: requested, cause: cause, previous: leaseBook.applied))
            log.append(.activate(requested))
            return
        }
        let suspended = isSuspended
        if suspended != suspendedApplied {
            log.append(.setSuspended(suspended))
            suspendedApplied = suspended
        }
        streams.settle(targets, policy, &log)
    }

    /// Stops the capture and deactivates, with the events of what that changed.
    mutating func deactivate(_ cause: EventCause) {
        if leaseBook.capturing {
            log.append(.stopCapture)
            leaseBook.capturing = false
        }
        log.append(.deactivate(notifyingOthers: policy.notifyOthersOnDeactivation))
        change(cause) { state in
            state.leaseBook.deactivated()
            state.log.emit(.deactivated(notifiedOthers: state.policy.notifyOthersOnDeactivation), cause)
        }
    }
}
