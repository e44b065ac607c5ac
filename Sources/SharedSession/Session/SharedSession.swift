public import Logging

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
/// Every method may be called from any thread. Each builds one request and sends it down one road
/// (`submit`): the state applies it under its lock, input observers get its record (a
/// ``SessionInput``, with the ids the session gave), the effects are performed in order after the lock
/// is released, and the events reach ``events`` subscribers and the ``delegate`` in order, with no
/// lock held.
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

    let state: Locked<SessionState>
    /// Serialises performing effects, so the engine and the stream controls see the changes in the
    /// order the state made them; holds each open stream's control.
    let lane = Locked<Lane>(Lane())
    let delivery = EventDelivery()
    let deadlines = DeadlineTimer()

    struct Lane {
        var controls: [StreamID: any StreamControl] = [:]
        /// Every activity meter a stream was told to follow: the render side holds them unretained,
        /// so they live as long as the session.
        var meters: [ObjectIdentifier: ActivityMeter] = [:]
        var observers: [ObjectIdentifier: any SessionInputObserver] = [:]
        /// The buffer of the last effects performed, emptied, lent to the state for the next input's
        /// (``EffectLog/reuse(_:)``), so a lease or a duck allocates nothing for its effects.
        var effects: [SessionEffect] = []
        /// The events of the effects being performed, kept between inputs for its capacity.
        var events: [SessionEvent] = []
    }

    /// Creates a session on `engine`. Tests make their own sessions this way; apps use
    /// ``bootstrap(engine:policy:file:line:)`` and ``shared``.
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
        let step = state.withLock { $0.apply(.close, at: clock.now()) }
        lane.withLock { lane in
            for effect in step.effects where effect.event == nil { apply(effect, &lane) }
        }
    }

    // MARK: Observation

    /// The state right now.
    public var snapshot: SessionSnapshot {
        state.withLock { $0.snapshot(at: clock.now()) }
    }

    /// A new stream of every event from now on. Every subscriber gets every event, in order; stop
    /// iterating (or cancel the task) to unsubscribe.
    public var events: AsyncStream<SessionEvent> { delivery.subscribe() }

    /// Receives every event synchronously, after the change that caused it, with no lock held. Held
    /// weakly.
    public var delegate: (any SharedSessionDelegate)? {
        get { delivery.delegate }
        set { delivery.delegate = newValue }
    }

    // MARK: Closing

    /// Closes the session: stops capture, closes every stream, deactivates, and finishes every event
    /// stream. Nothing reaches the engine afterwards (a live duck writes no further gain). Leases
    /// still held become no-ops.
    public func close() {
        deadlines.close()
        submit(.close)
        delivery.finishSubscribers()
    }

    // MARK: Engine reports

    private func engineReported(_ event: EngineEvent) {
        if case .externalVolumeChange(_, let volume) = event, !(volume.isFinite && volume >= 0 && volume <= 1) {
            logger.warning(
                "engine reported an out-of-range external volume; ignored", metadata: ["volume": "\(volume)"])
            return
        }
        submit(.engine(event))
    }

    // MARK: Deadlines

    /// Wakes up at `deadline` to release the ducks due then (see ``DeadlineTimer``).
    func scheduleExpiry(at deadline: ContinuousClock.Instant) {
        deadlines.schedule(at: deadline, runs: clock.schedulesDeadlines) { [weak self] scheduled in
            guard let self, deadlines.claim(scheduled) else { return }
            if let next = expireDeadlines() { scheduleExpiry(at: next) }
        }
    }

    /// Releases the ducks whose deadline has passed by the session's clock; returns the next deadline.
    @discardableResult
    func expireDeadlines() -> ContinuousClock.Instant? {
        submit(.expireDeadlines) { state, _ in state.nextDeadline }
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
}
