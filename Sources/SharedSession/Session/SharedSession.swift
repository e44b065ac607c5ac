import Dispatch
public import Logging
import Synchronization

/// The one audio session of a process, shared by the host video player and the SDK units embedded
/// in it.
///
/// Units ask for a session with ``acquire(_:owner:)`` (generic playback, or voice with the
/// microphone; voice takes precedence) and for the main video to be lowered with ``duck(owner:)`` or
/// paused with ``pauseMain(owner:)``. Each request is a lease that is given back exactly once. The
/// host opens the main stream, sets its own ``mainVolume``, plays and pauses, and passes the
/// platform's events to ``handle(_:)``. From all of that the session derives, after every change,
/// which configuration is active, the main stream's gain and play state, and whether rendering is
/// suspended, and tells its ``AudioEngine``.
///
/// Every method may be called from any thread. Engine calls are made after the state lock is
/// released, in the order of the changes; events reach ``events`` subscribers and the ``delegate``
/// in order, with no lock held.
public final class SharedSession: Sendable {
    /// The policy the session was made with.
    public let policy: SessionPolicy
    /// The engine that plays the streams.
    public let engine: any AudioEngine
    /// Voice input while a recording configuration (the voice session) is active: read it from one
    /// thread, for instance a voice-chat client's sender.
    public let voiceInput: AudioRingBuffer
    let logger: Logger
    /// Where the session reads the time: the continuous clock, or a replay's recorded times.
    package let clock: SessionClock

    private let state: Locked<SessionState>
    /// Serialises performing effects, so the engine and the stream controls see the changes in the
    /// order the state made them; holds each open stream's control.
    private let lane = Locked<Lane>(Lane())
    private let delivery = Locked<Delivery>(Delivery())
    /// Whether a subscriber or a delegate is set: `Delivery.hasReceivers` as of its last change, kept
    /// beside the lock so an input can ask without taking it. A delegate that went away since still
    /// counts (its events are dropped at delivery, as before).
    private let receiversSet = Atomic<Bool>(false)

    private let expiry = Locked<Expiry>(Expiry())

    private struct Lane {
        var controls: [StreamID: any StreamControl] = [:]
        /// Every activity meter a stream was told to follow: the render side holds them unretained,
        /// so they live as long as the session.
        var meters: [ObjectIdentifier: ActivityMeter] = [:]
        var observers: [ObjectIdentifier: any SessionInputObserver] = [:]
        /// The buffer of the last effects performed, emptied, lent to the state for the next input's
        /// (``SessionState/reuse(_:)``), so a lease or a duck allocates nothing for its effects.
        var effects: [SessionEffect] = []
        /// The events of the effects being performed, kept between inputs for its capacity.
        var events: [SessionEvent] = []
    }

    /// The wake-up that releases ducks at their deadline: a Dispatch timer of its own, so a busy
    /// Swift concurrency pool cannot hold a forgotten duck past its deadline.
    private struct Expiry {
        var scheduled: ContinuousClock.Instant?
        var closed = false
    }

    private static let deadlineQueue = DispatchQueue(label: "SharedSession.deadlines")

    private struct Delivery {
        var pending: [SessionEvent] = []
        var draining = false
        var subscribers: [UInt64: AsyncStream<SessionEvent>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        weak var delegate: (any SharedSessionDelegate)?

        /// Whether anyone receives events: with no subscriber and no delegate, an event has nowhere
        /// to go and is not queued.
        var hasReceivers: Bool { !subscribers.isEmpty || delegate != nil }
    }

    /// Creates a session on `engine`. Tests make their own sessions this way; apps use
    /// ``bootstrap(engine:policy:)`` and ``shared``.
    public convenience init(engine: some AudioEngine, policy: SessionPolicy = .default, logger: Logger? = nil) {
        self.init(engine: engine, policy: policy, logger: logger, clock: .continuous)
    }

    /// Creates a session that reads the time from `clock` (a replay's recorded times).
    package init(engine: some AudioEngine, policy: SessionPolicy, logger: Logger?, clock: SessionClock) {
        self.engine = engine
        self.policy = policy
        self.clock = clock
        self.logger = logger ?? Logger(label: "SharedSession")
        self.state = Locked(SessionState(policy: policy))
        // Two seconds of voice: a client that reads every 20 ms never loses a frame.
        self.voiceInput = try! AudioRingBuffer(
            minimumCapacity: 2 * engine.format.sampleRate, channels: engine.format.channels, measuringActivity: true)
        engine.setEventHandler { [weak self] event in self?.engineReported(event) }
    }

    deinit {
        // Nothing can hold a lease or a stream handle any more (both keep the session alive), so
        // only the engine's side is left to tidy; no events, since no one can receive them.
        let effects = state.withLock { $0.close() }
        lane.withLock { lane in
            for effect in effects where effect.event == nil { apply(effect, &lane) }
        }
    }

    // MARK: Process-wide session

    private static let global = Locked<SharedSession?>(nil)

    /// The process-wide session: the one given to ``bootstrap(engine:policy:)`` at app start.
    ///
    /// Used before any bootstrap, it is a session on an ``OfflineEngine`` (no sound server), and a
    /// warning is logged; a later bootstrap is then ignored.
    public static var shared: SharedSession {
        global.withLock { session in
            if let session { return session }
            let made = SharedSession(engine: OfflineEngine())
            made.logger.warning("SharedSession.shared used before bootstrap(engine:policy:): using an offline engine")
            session = made
            return made
        }
    }

    /// Sets the process-wide session's engine and policy, once, at app start (like swift-log's
    /// `LoggingSystem.bootstrap`). Tests never call it: each makes its own session.
    ///
    /// A second call, or one after ``shared`` was first used, is ignored and logged as an error; the
    /// first session and everything it holds stay as they are.
    public static func bootstrap(engine: some AudioEngine, policy: SessionPolicy) {
        let accepted = global.withLock { session -> Bool in
            guard session == nil else { return false }
            session = SharedSession(engine: engine, policy: policy)
            return true
        }
        if !accepted {
            Logger(label: "SharedSession").error(
                "SharedSession.bootstrap called after the shared session was set up; the call was ignored")
        }
    }

    // MARK: Observation

    /// The state right now.
    public var snapshot: SessionSnapshot {
        state.withLock { $0.snapshot(at: clock.now()) }
    }

    /// A new stream of every event from now on. Every subscriber gets every event, in order; stop
    /// iterating (or cancel the task) to unsubscribe.
    public var events: AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream<SessionEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = delivery.withLock { delivery -> UInt64 in
            delivery.nextSubscriber += 1
            delivery.subscribers[delivery.nextSubscriber] = continuation
            receiversSet.store(true, ordering: .releasing)
            return delivery.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            delivery.withLock { delivery in
                delivery.subscribers[id] = nil
                receiversSet.store(delivery.hasReceivers, ordering: .releasing)
            }
        }
        return stream
    }

    /// Receives every event synchronously, after the change that caused it, with no lock held. Held
    /// weakly.
    public var delegate: (any SharedSessionDelegate)? {
        get { delivery.withLock { $0.delegate } }
        set {
            delivery.withLock { delivery in
                delivery.delegate = newValue
                receiversSet.store(delivery.hasReceivers, ordering: .releasing)
            }
        }
    }

    // MARK: Session leases

    /// Asks for a session of `type` on behalf of `owner` and returns the lease that holds it.
    ///
    /// The first lease activates the session with the policy's configuration for its type; a voice
    /// lease switches an active generic session to the voice configuration. The owner's name shows in
    /// ``snapshot`` for as long as the lease lives, so a leak can be found by name.
    ///
    /// - Throws: ``SessionError`` with code `activationRefused` if the engine refused the
    ///   configuration; the session and every lease already held stay as they were.
    public func acquire(_ type: AudioSessionType, owner: String) throws(SessionError) -> SessionLease {
        let (id, granted, refusal, queued) = lane.withLock {
            lane -> (LeaseID, AudioSessionType, SessionError?, Bool) in
            let now = clock.now()
            let deliver = receivesEvents()
            let (id, effects, grantedAtOnce) = state.withLock { state in
                prepare(&state, &lane, deliver: deliver)
                let (id, effects) = state.acquire(type, owner: owner, at: now)
                return (id, effects, state.grantedType(id))
            }
            notify(.acquire(type, owner: owner, lease: id), at: now, &lane)
            let queued = perform(effects, delivering: deliver, &lane)
            // Granted at once (its configuration was active): its effects start no activation, so
            // nothing they do can take the grant back.
            if let grantedAtOnce { return (id, grantedAtOnce, nil, queued) }
            // The activation's outcome is in: the lease is granted (as the type its unit's limits
            // allow), or refused with the reason.
            return state.withLock { state in
                guard let granted = state.grantedType(id) else { return (id, type, state.takeRefusal(id), queued) }
                return (id, granted, nil, queued)
            }
        }
        if queued { drain() }
        if let refusal {
            logger.error("session lease refused", metadata: ["owner": "\(owner)", "error": "\(refusal)"])
            throw refusal
        }
        return SessionLease(id: id, type: granted, owner: owner, session: self)
    }

    package func releaseLease(_ id: LeaseID, owner: String, dropped: Bool) {
        let released = run(.releaseLease(id, dropped: dropped)) { state in
            state.releaseLease(id, dropped: dropped)
        }
        if dropped, released {
            logger.warning(
                "session lease dropped without release()", metadata: ["owner": "\(owner)", "lease": "\(id)"])
        }
    }

    package func unitReleased(owner: String, reason: String, sessions: Int, ducks: Int) {
        logger.notice(
            "unit released",
            metadata: ["owner": "\(owner)", "reason": "\(reason)", "sessions": "\(sessions)", "ducks": "\(ducks)"])
        run(.unitReleased(owner: owner, reason: reason)) { $0.noteUnitReleased(owner: owner, reason: reason) }
    }

    package func ignoredRelease(owner: String, what: String, cause: EventCause) {
        logger.warning("release ignored: nothing to release", metadata: ["owner": "\(owner)", "what": "\(what)"])
        run(.ignoredRelease(owner: owner, what: what, cause: cause)) {
            $0.noteIgnoredRelease(owner: owner, what: what, cause: cause)
        }
    }

    // MARK: Ducking

    /// Lowers the main stream to ``mainVolume`` × the policy's duck level while the lease lives.
    /// Ducks stack without compounding; the last one released restores the host's current volume.
    ///
    /// A request beyond the unit's limits that the policy refuses returns a lease that is already
    /// released, with a `requestRejected` event; use ``duck(_:)`` to get the error thrown.
    public func duck(owner: String) -> DuckLease {
        duckOrLog(DuckRequest(owner: owner))
    }

    /// Lowers the main stream to ``mainVolume`` × `level` while the lease lives. With several ducks
    /// the lowest level applies.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` if `level` is not a finite number from 0
    ///   through 1, or `limitExceeded` if the unit's limits refuse it; no duck is made.
    public func duck(owner: String, level: Float) throws(SessionError) -> DuckLease {
        try duck(DuckRequest(owner: owner, style: .duck(level: level)))
    }

    /// Pauses the main stream instead of ducking it while the lease lives. It resumes when the last
    /// such lease goes, unless the host paused it itself in the meantime. A unit that may not pause
    /// the main stream gets a duck instead, or an already released lease, as its limits say.
    public func pauseMain(owner: String) -> DuckLease {
        duckOrLog(DuckRequest(owner: owner, style: .pause))
    }

    /// Asks for the main stream to be ducked, paused, or ducked while a stream or the microphone is
    /// active (``DuckStyle/followActivity(_:level:)``), within the unit's limits
    /// (``SessionPolicy/limits(for:)``), optionally with a deadline after which the request is released
    /// as if its holder had.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` for a level outside 0 through 1 or a hold
    ///   that is not positive, `unknownStream` for activity of a stream that is not open, or
    ///   `limitExceeded` when the unit's limits refuse the request; nothing held changes.
    public func duck(_ request: DuckRequest) throws(SessionError) -> DuckLease {
        do throws(SessionError) {
            if case .some(let level?) = request.style.requestedLevel {
                try SessionError.checkUnitInterval(level, name: "duck level")
            }
            if let hold = request.maximumHold, hold <= .zero {
                throw SessionError.invalidValue(
                    "maximumHold", Double(hold.components.seconds), fix: "give a positive duration, or nil")
            }
        } catch {
            reject(error)
            throw error
        }
        let (result, info, queued) = lane.withLock { lane -> (Result<LeaseID, SessionError>, DuckInfo?, Bool) in
            let now = clock.now()
            let deliver = receivesEvents()
            let (result, effects, info) = state.withLock { state in
                prepare(&state, &lane, deliver: deliver)
                let (result, effects) = state.duck(request, at: now)
                return (result, effects, (try? result.get()).flatMap { state.duckInfo($0) })
            }
            // A request the unit's limits refused is recorded with lease 0, the id of its refused lease.
            notify(.duck(request, lease: (try? result.get()) ?? LeaseID(rawValue: 0)), at: now, &lane)
            return (result, info, perform(effects, delivering: deliver, &lane))
        }
        if queued { drain() }
        switch result {
        case .success(let id):
            if let deadline = info?.deadline { scheduleExpiry(at: deadline) }
            return DuckLease(id: id, style: info?.style ?? request.style, owner: request.owner, session: self)
        case .failure(let error):
            logger.error("duck refused", metadata: ["owner": "\(request.owner)", "error": "\(error)"])
            throw error
        }
    }

    private func duckOrLog(_ request: DuckRequest) -> DuckLease {
        do {
            return try duck(request)
        } catch {
            return DuckLease(refused: request, session: self)
        }
    }

    package func releaseDuck(_ id: LeaseID, owner: String, dropped: Bool) {
        let released = run(.releaseDuck(id, dropped: dropped)) { state in
            state.releaseLiveDuck(id, dropped: dropped)
        }
        if dropped, released {
            logger.warning("duck lease dropped without release()", metadata: ["owner": "\(owner)", "lease": "\(id)"])
        }
    }

    // MARK: Host controls

    /// The host's own volume for the main stream, 0 through 1. Ducking multiplies it; a change while
    /// ducked is heard at once as `new × duck level`, and the restore goes to the new value.
    ///
    /// An invalid value set through this property is refused: the volume stays, an error is logged
    /// and a `requestRejected` event is sent. Use ``setMainVolume(_:)`` to get the error thrown.
    public var mainVolume: Float {
        get { state.withLock { $0.hostVolume } }
        set {
            do {
                try setMainVolume(newValue)
            } catch {
                logger.error("mainVolume refused", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Sets the host's own volume for the main stream.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` for NaN, infinity, or a value outside
    ///   0 through 1; the volume is left as it was.
    public func setMainVolume(_ volume: Float) throws(SessionError) {
        do {
            try SessionError.checkUnitInterval(volume, name: "mainVolume")
        } catch {
            reject(error)
            throw error
        }
        run(.setMainVolume(volume)) { $0.setHostVolume(volume) }
    }

    /// The host presses play: the main stream plays unless an interruption is in progress or a pause
    /// request came after this call. Also lifts an interruption whose end never came.
    public func play() {
        run(.play) { $0.play() }
    }

    /// The host presses pause. Nothing resumes the main stream until the host plays again.
    public func pause() {
        run(.pause) { $0.pause() }
    }

    /// Suspends rendering by hand (Wwise's `Suspend`). With `renderAnyway` the sources keep running
    /// and only the output is muted, so playback does not fall behind.
    public func suspend(renderAnyway: Bool = false) {
        run(.suspend(renderAnyway: renderAnyway)) { $0.suspend(renderAnyway: renderAnyway) }
    }

    /// Ends a ``suspend(renderAnyway:)`` (Wwise's `WakeupFromSuspend`).
    public func wakeFromSuspend() {
        run(.wakeFromSuspend) { $0.wakeFromSuspend() }
    }

    /// Applies a platform event: an interruption, a route change, the app's lifecycle, other apps'
    /// audio.
    public func handle(_ event: SystemEvent) {
        let applied = run(.system(event)) { state in
            let (applied, effects) = state.handle(event)
            return (applied, effects)
        }
        if !applied {
            logger.debug("system event changed nothing", metadata: ["event": "\(event)"])
        }
    }

    // MARK: Streams

    /// Opens the main video-audio stream, which ducking and pause requests act on. It starts at the
    /// gain and play state the session is in (ducked if a duck is live: never a flash at full volume).
    ///
    /// - Throws: ``SessionError`` with code `mainStreamAlreadyOpen` if one is open, or the engine's
    ///   error if it cannot open the stream.
    public func openMainStream(
        _ descriptor: StreamDescriptor = StreamDescriptor(name: "main", role: .movie), source: any AudioSource
    ) throws(SessionError) -> StreamHandle {
        try openStream(descriptor, source: source, isMain: true, owner: nil, volume: 1)
    }

    /// Opens an overlay stream (a feed clip, a notification, the far end of a voice chat) at its own
    /// `volume`. Ducking does not touch it; background-music muting does if the descriptor says so.
    ///
    /// `owner` names the unit that plays it (an SDK's name), so the stream's events say who caused
    /// them; `nil` for the host's own streams.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` for a bad volume, or the engine's error.
    public func openStream(
        _ descriptor: StreamDescriptor, source: any AudioSource, volume: Float = 1, owner: String? = nil
    ) throws(SessionError) -> StreamHandle {
        do {
            try SessionError.checkUnitInterval(volume, name: "stream volume")
        } catch {
            reject(error)
            throw error
        }
        return try openStream(descriptor, source: source, isMain: false, owner: owner, volume: volume)
    }

    private func openStream(
        _ descriptor: StreamDescriptor, source: any AudioSource, isMain: Bool, owner: String?, volume: Float
    ) throws(SessionError) -> StreamHandle {
        let id: StreamID
        do throws(SessionError) {
            id = try lane.withLock { lane throws(SessionError) -> StreamID in
                let (id, target) = try state.withLock { state throws(SessionError) in
                    try state.addStream(descriptor, isMain: isMain, owner: owner, volume: volume)
                }
                do throws(SessionError) {
                    lane.controls[id] = try engine.openStream(
                        id, descriptor: descriptor, source: source, gain: target.gain, paused: target.paused)
                } catch {
                    state.withLock { $0.streamOpenFailed(id) }
                    notify(.openStreamRefused(descriptor, message: error.message), at: nil, &lane)
                    throw error
                }
                notify(
                    .openStream(descriptor, owner: owner, volume: volume, isMain: isMain, stream: id), at: nil, &lane)
                let deliver = receivesEvents()
                let effects = state.withLock { state in
                    prepare(&state, &lane, deliver: deliver)
                    return state.streamOpened(id, at: target)
                }
                perform(effects, delivering: deliver, &lane)
                return id
            }
        } catch {
            reject(error)
            throw error
        }
        drain()
        return StreamHandle(id: id, descriptor: descriptor, isMain: isMain, session: self)
    }

    package func closeStream(_ id: StreamID) {
        run(.closeStream(id)) { $0.removeStream(id) }
    }

    package func setStreamVolume(_ id: StreamID, _ volume: Float) throws(SessionError) {
        do {
            try SessionError.checkUnitInterval(volume, name: "stream volume")
        } catch {
            reject(error)
            throw error
        }
        let found = run(.setStreamVolume(id, volume)) { state in
            let (found, effects) = state.setStreamVolume(id, volume)
            return (found, effects)
        }
        guard found else {
            let error = SessionError(
                code: .unknownStream, message: "\(id) is not open: open it before setting its volume")
            reject(error)
            throw error
        }
    }

    // MARK: Closing

    /// Closes the session: stops capture, closes every stream, deactivates, and finishes every event
    /// stream. Nothing reaches the engine afterwards (a live duck writes no further gain). Leases
    /// still held become no-ops.
    public func close() {
        expiry.withLock { $0.closed = true }
        run(.close) { $0.close() }
        let subscribers = delivery.withLock { delivery in
            defer {
                delivery.subscribers.removeAll()
                receiversSet.store(delivery.hasReceivers, ordering: .releasing)
            }
            return Array(delivery.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    // MARK: Engine reports

    private func engineReported(_ event: EngineEvent) {
        if case .externalVolumeChange(_, let volume) = event, !(volume.isFinite && volume >= 0 && volume <= 1) {
            logger.warning(
                "engine reported an out-of-range external volume; ignored", metadata: ["volume": "\(volume)"])
            return
        }
        run(.engine(event)) { $0.handleEngineEvent(event) }
    }

    // MARK: Deadlines

    /// Wakes up at `deadline` to release the ducks due then, unless an earlier wake-up is set. A
    /// later wake-up that finds an earlier one set does nothing; one that finds nothing due (its duck
    /// was released in time) sets the next.
    private func scheduleExpiry(at deadline: ContinuousClock.Instant) {
        let schedule = expiry.withLock { expiry -> Bool in
            if let scheduled = expiry.scheduled, scheduled <= deadline { return false }
            expiry.scheduled = deadline
            return true
        }
        guard schedule, clock.schedulesDeadlines else { return }
        let wait = max(.zero, deadline - .now)
        let nanoseconds =
            Int(wait.components.seconds) * 1_000_000_000 + Int(wait.components.attoseconds / 1_000_000_000)
        // A microsecond late rather than early, so the deadline has passed by the clock when it runs.
        Self.deadlineQueue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds + 1000)) { [weak self] in
            self?.expireDue(scheduled: deadline)
        }
    }

    private func expireDue(scheduled: ContinuousClock.Instant) {
        let current = expiry.withLock { expiry -> Bool in
            guard expiry.scheduled == scheduled, !expiry.closed else { return false }
            expiry.scheduled = nil
            return true
        }
        guard current else { return }
        if let next = expireDeadlines() { scheduleExpiry(at: next) }
    }

    /// Releases the ducks whose deadline has passed by the session's clock; returns the next deadline.
    @discardableResult
    package func expireDeadlines() -> ContinuousClock.Instant? {
        let now = clock.now()
        return run(.expireDeadlines, at: now) { state in
            let effects = state.expire(at: now)
            return (state.nextDeadline, effects)
        }
    }

    // MARK: Recording

    /// Starts telling `observer` every input that reaches the session (see ``SessionInput``), until
    /// ``removeInputObserver(_:)``. The session holds it strongly meanwhile.
    public func addInputObserver(_ observer: any SessionInputObserver) {
        lane.withLock { $0.observers[ObjectIdentifier(observer)] = observer }
    }

    /// Stops telling `observer` the session's inputs.
    public func removeInputObserver(_ observer: any SessionInputObserver) {
        _ = lane.withLock { $0.observers.removeValue(forKey: ObjectIdentifier(observer)) }
    }

    /// Tells the observers `input`, at `now` (the instant the state was given), or at the clock's
    /// time when the state was given none: read only when someone observes.
    private func notify(_ input: SessionInput, at now: ContinuousClock.Instant?, _ lane: inout Lane) {
        guard !lane.observers.isEmpty else { return }
        let now = now ?? clock.now()
        for observer in lane.observers.values { observer.session(self, received: input, at: now) }
    }

    private func notify(emitted event: SessionEvent, _ lane: inout Lane) {
        guard !lane.observers.isEmpty else { return }
        let now = clock.now()
        for observer in lane.observers.values { observer.session(self, emitted: event, at: now) }
    }

    // MARK: The three steps: mutate, perform, deliver

    /// Runs an input on the state under its lock, performs the effects it returns in order (under
    /// the lane, so concurrent callers' effects reach the engine in the order of their changes, but
    /// with the state unlocked, so snapshots never wait for the engine), then delivers the events.
    @discardableResult
    private func run(_ input: SessionInput, _ body: (inout SessionState) -> [SessionEffect]) -> Bool {
        run(input) { state in (true, body(&state)) }
    }

    private func run<R: Sendable>(
        _ input: SessionInput, at now: ContinuousClock.Instant? = nil,
        _ body: (inout SessionState) -> (R, [SessionEffect])
    ) -> R {
        let (result, queued) = lane.withLock { lane -> (R, Bool) in
            let deliver = receivesEvents()
            let (result, effects) = state.withLock { state in
                prepare(&state, &lane, deliver: deliver)
                return body(&state)
            }
            notify(input, at: now, &lane)
            return (result, perform(effects, delivering: deliver, &lane))
        }
        // Nothing queued by this input: whatever is pending was queued by a caller that drains it.
        if queued { drain() }
        return result
    }

    package func reject(_ error: SessionError) {
        run(.rejected(error)) { $0.noteRejected(error) }
    }

    /// Readies the state for an input made under the lane: lends it the lane's effects buffer, and
    /// has it build events only if someone gets them (``receivesEvents()``, or an input observer).
    private func prepare(_ state: inout SessionState, _ lane: inout Lane, deliver: Bool) {
        state.reuse(&lane.effects)
        state.emitsEvents = deliver || !lane.observers.isEmpty
    }

    /// Whether an event made now has anyone to go to: a subscriber or the delegate. Read under the
    /// lane, before the input, so a subscriber that arrives meanwhile gets the events from the next
    /// input on, as if it had arrived a moment later.
    private func receivesEvents() -> Bool {
        receiversSet.load(ordering: .acquiring)
    }

    /// Performs effects in order; an activation's or a capture's outcome goes back into the state,
    /// and the effects that returns are performed next. Events go to the input observers, and are
    /// queued for ``drain()`` if `deliver` (see ``receivesEvents()``); returns whether any were. The
    /// buffer goes back to the lane for the next input.
    @discardableResult
    private func perform(_ effects: consuming [SessionEffect], delivering deliver: Bool, _ lane: inout Lane) -> Bool {
        var queue = effects
        var index = 0
        while index < queue.count {
            let effect = queue[index]
            index += 1
            switch effect {
            case .emit(let event):
                if deliver { lane.events.append(event) }
                notify(emitted: event, &lane)
            case .activate(let configuration):
                do {
                    try engine.activate(configuration)
                    notify(.activationOutcome(configuration, refused: nil), at: nil, &lane)
                    queue += state.withLock { $0.activationSucceeded() }
                } catch {
                    logger.error(
                        "engine refused configuration",
                        metadata: ["configuration": "\(configuration)", "error": "\(error.message)"])
                    notify(.activationOutcome(configuration, refused: error.message), at: nil, &lane)
                    queue += state.withLock { $0.activationFailed(error) }
                }
            case .startCapture:
                do {
                    try engine.startCapture(into: voiceInput)
                    notify(.captureOutcome(refused: nil), at: nil, &lane)
                    queue += state.withLock { $0.captureStarted() }
                } catch {
                    logger.error("voice capture refused", metadata: ["error": "\(error.message)"])
                    notify(.captureOutcome(refused: error.message), at: nil, &lane)
                    queue += state.withLock { $0.captureFailed(error) }
                }
            default:
                apply(effect, &lane)
            }
        }
        let queued = !lane.events.isEmpty
        if queued {
            delivery.withLock { $0.pending.append(contentsOf: lane.events) }
            lane.events.removeAll(keepingCapacity: true)
        }
        if queue.capacity > lane.effects.capacity {
            queue.removeAll(keepingCapacity: true)
            lane.effects = queue
        }
        return queued
    }

    /// Performs an effect that has no outcome.
    private func apply(_ effect: SessionEffect, _ lane: inout Lane) {
        switch effect {
        case .restore(let configuration):
            // Undo a half-done switch so the engine matches what the session reports; if even that is
            // refused, the engine's next activation starts from a clean slate anyway.
            // Its outcome is recorded like any activation's, so a replay's engine answers it in turn.
            if let configuration {
                do {
                    try engine.activate(configuration)
                    notify(.activationOutcome(configuration, refused: nil), at: nil, &lane)
                } catch {
                    notify(.activationOutcome(configuration, refused: error.message), at: nil, &lane)
                }
            } else {
                engine.deactivate(notifyingOthers: false)
            }
        case .deactivate(let notifying): engine.deactivate(notifyingOthers: notifying)
        case .stopCapture: engine.stopCapture()
        case .setSuspended(let suspended): engine.setSuspended(suspended)
        case .setGain(let id, let gain, let ramp): lane.controls[id]?.setGain(gain, ramp: ramp)
        case .setPaused(let id, let paused): lane.controls[id]?.setPaused(paused)
        case .setActivityDuck(let id, let gain, let sources):
            var meters: [ActivityMeter] = []
            let voice = policy.voiceActivity
            for source in sources {
                let meter: ActivityMeter?
                switch source {
                case .stream(let followed): meter = lane.controls[followed]?.activityMeter()
                case .voiceInput: meter = voiceInput.activity
                }
                guard let meter else { continue }
                meter.configure(
                    threshold: voice.linearThreshold, holdFrames: engine.format.frames(in: voice.hold))
                lane.meters[ObjectIdentifier(meter)] = meter
                meters.append(meter)
            }
            lane.controls[id]?.setActivityDuck(
                gain: gain, following: meters, attack: voice.attack, release: voice.release)
        case .closeStream(let id):
            engine.closeStream(id)
            lane.controls[id] = nil
        case .activate, .startCapture, .emit: break
        }
    }

    /// Delivers queued events to subscribers and the delegate, in order, with no lock held. One thread
    /// delivers at a time; events queued meanwhile (also by a delegate calling back in) are delivered by
    /// that thread before it returns.
    private func drain() {
        var claimed = delivery.withLock { delivery -> Bool in
            guard !delivery.draining, !delivery.pending.isEmpty else { return false }
            delivery.draining = true
            return true
        }
        while claimed {
            let (batch, subscribers, delegate) = delivery.withLock { delivery in
                defer { delivery.pending.removeAll(keepingCapacity: true) }
                return (delivery.pending, Array(delivery.subscribers.values), delivery.delegate)
            }
            for event in batch {
                for subscriber in subscribers { subscriber.yield(event) }
                guard let delegate else { continue }
                delegate.session(self, didEmit: event)
                switch event.kind {
                case .interruptionBegan: delegate.sessionInterruptionBegan(self)
                case .interruptionEnded(let shouldResume):
                    delegate.sessionInterruptionEnded(self, shouldResume: shouldResume)
                case .routeChanged(let change): delegate.session(self, routeDidChange: change)
                default: break
                }
            }
            claimed = delivery.withLock { delivery -> Bool in
                if delivery.pending.isEmpty {
                    delivery.draining = false
                    return false
                }
                return true
            }
        }
    }
}
