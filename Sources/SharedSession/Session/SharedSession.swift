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

    private let state: Locked<SessionState>
    private let applied = Locked<EngineMirror>(EngineMirror())
    private let delivery = Locked<Delivery>(Delivery())

    /// What the engine has been told, guarded by the lock that serialises engine calls.
    private struct EngineMirror {
        var suspended = false
        var capturing = false
        var streams: [StreamID: SessionState.StreamTarget] = [:]
        var closed = false
    }

    private struct Delivery {
        var pending: [SessionEvent] = []
        var draining = false
        var subscribers: [UInt64: AsyncStream<SessionEvent>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        weak var delegate: (any SharedSessionDelegate)?
    }

    /// Creates a session on `engine`. Tests make their own sessions this way; apps use
    /// ``bootstrap(engine:policy:)`` and ``shared``.
    public init(engine: some AudioEngine, policy: SessionPolicy = .default, logger: Logger? = nil) {
        self.engine = engine
        self.policy = policy
        self.logger = logger ?? Logger(label: "SharedSession")
        self.state = Locked(SessionState(policy: policy))
        // Two seconds of voice: a client that reads every 20 ms never loses a frame.
        self.voiceInput = try! AudioRingBuffer(
            minimumCapacity: 2 * engine.format.sampleRate, channels: engine.format.channels)
        engine.setEventHandler { [weak self] event in self?.engineReported(event) }
    }

    deinit {
        // Nothing can hold a lease or a stream handle any more (both keep the session alive), so
        // only the engine's side is left to tidy; no events, since no one can receive them.
        applied.withLock { mirror in
            guard !mirror.closed else { return }
            if mirror.capturing { engine.stopCapture() }
            for id in mirror.streams.keys.sorted() { engine.closeStream(id) }
            if state.withLock({ $0.appliedConfiguration != nil }) {
                engine.deactivate(notifyingOthers: policy.notifyOthersOnDeactivation)
            }
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
        state.withLock { $0.snapshot(at: .now) }
    }

    /// A new stream of every event from now on. Every subscriber gets every event, in order; stop
    /// iterating (or cancel the task) to unsubscribe.
    public var events: AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream<SessionEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = delivery.withLock { delivery -> UInt64 in
            delivery.nextSubscriber += 1
            delivery.subscribers[delivery.nextSubscriber] = continuation
            return delivery.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.delivery.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Receives every event synchronously, after the change that caused it, with no lock held. Held
    /// weakly.
    public var delegate: (any SharedSessionDelegate)? {
        get { delivery.withLock { $0.delegate } }
        set { delivery.withLock { $0.delegate = newValue } }
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
        let id = mutate { $0.acquire(type, owner: owner, at: .now) }
        reconcile()
        let refusal: SessionError? = state.withLock { state in
            state.isGranted(id) ? nil : state.takeRefusal(id)
        }
        drain()
        if let refusal {
            logger.error("session lease refused", metadata: ["owner": "\(owner)", "error": "\(refusal)"])
            throw refusal
        }
        return SessionLease(id: id, type: type, owner: owner, session: self)
    }

    func releaseLease(_ id: LeaseID, owner: String, dropped: Bool) {
        let released = mutate { $0.release(id, dropped: dropped) }
        if dropped, released {
            logger.warning(
                "session lease dropped without release()", metadata: ["owner": "\(owner)", "lease": "\(id)"])
        }
        reconcile()
        drain()
    }

    func ignoredRelease(owner: String, what: String, cause: EventCause) {
        logger.warning("release ignored: nothing to release", metadata: ["owner": "\(owner)", "what": "\(what)"])
        mutate { $0.noteIgnoredRelease(owner: owner, what: what, cause: cause) }
        drain()
    }

    // MARK: Ducking

    /// Lowers the main stream to ``mainVolume`` × the policy's duck level while the lease lives.
    /// Ducks stack without compounding; the last one released restores the host's current volume.
    public func duck(owner: String) -> DuckLease {
        makeDuck(owner: owner, style: .duck(level: nil))
    }

    /// Lowers the main stream to ``mainVolume`` × `level` while the lease lives. With several ducks
    /// the lowest level applies.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` if `level` is not a finite number from 0
    ///   through 1; no duck is made.
    public func duck(owner: String, level: Float) throws(SessionError) -> DuckLease {
        do {
            try SessionError.checkUnitInterval(level, name: "duck level")
        } catch {
            reject(error)
            throw error
        }
        return makeDuck(owner: owner, style: .duck(level: level))
    }

    /// Pauses the main stream instead of ducking it while the lease lives. It resumes when the last
    /// such lease goes, unless the host paused it itself in the meantime.
    public func pauseMain(owner: String) -> DuckLease {
        makeDuck(owner: owner, style: .pause)
    }

    private func makeDuck(owner: String, style: DuckStyle) -> DuckLease {
        let id = mutate { $0.duck(owner: owner, style: style, at: .now) }
        reconcile()
        drain()
        return DuckLease(id: id, style: style, owner: owner, session: self)
    }

    func releaseDuck(_ id: LeaseID, owner: String, dropped: Bool) {
        let released = mutate { $0.releaseDuck(id, dropped: dropped) }
        if dropped, released {
            logger.warning("duck lease dropped without release()", metadata: ["owner": "\(owner)", "lease": "\(id)"])
        }
        reconcile()
        drain()
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
        mutate { $0.setHostVolume(volume) }
        reconcile()
        drain()
    }

    /// The host presses play: the main stream plays unless an interruption is in progress or a pause
    /// request came after this call. Also lifts an interruption whose end never came.
    public func play() {
        mutate { $0.play() }
        reconcile()
        drain()
    }

    /// The host presses pause. Nothing resumes the main stream until the host plays again.
    public func pause() {
        mutate { $0.pause() }
        reconcile()
        drain()
    }

    /// Suspends rendering by hand (Wwise's `Suspend`). With `renderAnyway` the sources keep running
    /// and only the output is muted, so playback does not fall behind.
    public func suspend(renderAnyway: Bool = false) {
        mutate { $0.suspend(renderAnyway: renderAnyway) }
        reconcile()
        drain()
    }

    /// Ends a ``suspend(renderAnyway:)`` (Wwise's `WakeupFromSuspend`).
    public func wakeFromSuspend() {
        mutate { $0.wakeFromSuspend() }
        reconcile()
        drain()
    }

    /// Applies a platform event: an interruption, a route change, the app's lifecycle, other apps'
    /// audio.
    public func handle(_ event: SystemEvent) {
        let applied = mutate { $0.handle(event) }
        if !applied {
            logger.debug("system event changed nothing", metadata: ["event": "\(event)"])
        }
        reconcile()
        drain()
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
        do {
            id = try applied.withLock { mirror throws(SessionError) -> StreamID in
                guard !mirror.closed else {
                    throw SessionError(
                        code: .sessionClosed,
                        message: "the session is closed, so \(descriptor.name) cannot be opened: "
                            + "make a new SharedSession")
                }
                let (id, target) = try state.withLock { state throws(SessionError) in
                    let id = try state.addStream(descriptor, isMain: isMain, owner: owner, volume: volume)
                    return (id, state.engineTarget.streams[id]!)
                }
                do {
                    try engine.openStream(
                        id, descriptor: descriptor, source: source, gain: target.gain, paused: target.paused)
                } catch {
                    _ = state.withLock { $0.removeStream(id, emitting: false) }
                    throw Self.wrap(error, code: .streamRefused, doing: "open stream \(descriptor.name)")
                }
                mirror.streams[id] = target
                mutate { $0.streamOpened(id) }
                return id
            }
        } catch {
            reject(error)
            throw error
        }
        reconcile()
        drain()
        return StreamHandle(id: id, descriptor: descriptor, isMain: isMain, session: self)
    }

    func closeStream(_ id: StreamID) {
        applied.withLock { mirror in
            guard mirror.streams.removeValue(forKey: id) != nil else { return }
            engine.closeStream(id)
            _ = mutate { $0.removeStream(id, emitting: true) }
        }
        reconcile()
        drain()
    }

    func setStreamVolume(_ id: StreamID, _ volume: Float) throws(SessionError) {
        do {
            try SessionError.checkUnitInterval(volume, name: "stream volume")
        } catch {
            reject(error)
            throw error
        }
        let found = mutate { $0.setStreamVolume(id, volume) }
        guard found else {
            let error = SessionError(
                code: .unknownStream, message: "\(id) is not open: open it before setting its volume")
            reject(error)
            throw error
        }
        reconcile()
        drain()
    }

    // MARK: Closing

    /// Closes the session: stops capture, closes every stream, deactivates, and finishes every event
    /// stream. Nothing reaches the engine afterwards (a live duck writes no further gain). Leases
    /// still held become no-ops.
    public func close() {
        applied.withLock { mirror in
            guard !mirror.closed else { return }
            mirror.closed = true
            if mirror.capturing { engine.stopCapture() }
            for id in mirror.streams.keys.sorted() { engine.closeStream(id) }
            mirror.streams.removeAll()
            let wasActive = state.withLock { $0.appliedConfiguration != nil }
            if wasActive {
                engine.deactivate(notifyingOthers: policy.notifyOthersOnDeactivation)
                mutate { $0.deactivated() }
            }
            mutate { $0.close() }
        }
        drain()
        let subscribers = delivery.withLock { delivery in
            defer { delivery.subscribers.removeAll() }
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
        mutate { $0.handleEngineEvent(event) }
        if case .reconnected = event {
            // The engine reopened its streams from what it was last told; re-send anything that
            // changed while it was away.
            applied.withLock { $0.streams.removeAll(keepingCapacity: true) }
            resyncStreams()
        }
        reconcile()
        drain()
    }

    private func resyncStreams() {
        applied.withLock { mirror in
            let targets = state.withLock { $0.engineTarget.streams }
            for (id, target) in targets {
                // A ramp, not a step: if the engine's render side kept a level other than the target
                // across the outage, it glides there instead of clicking.
                engine.setGain(target.gain, ramp: policy.fadeDown, stream: id)
                engine.setPaused(target.paused, stream: id)
                mirror.streams[id] = target
            }
            engine.setSuspended(mirror.suspended)
        }
    }

    // MARK: The three steps: mutate, reconcile, deliver

    /// Runs a mutation under the state lock and queues its events for delivery in order.
    @discardableResult
    private func mutate<R>(_ body: (inout SessionState) -> R) -> R {
        state.withLock { state in
            let result = body(&state)
            let events = state.takeEvents()
            if !events.isEmpty { delivery.withLock { $0.pending.append(contentsOf: events) } }
            return result
        }
    }

    private func reject(_ error: SessionError) {
        mutate { $0.noteRejected(error) }
        drain()
    }

    /// Brings the engine to the state derived from the current leases and settings. Engine calls are
    /// serialised by the mirror's lock and always aim at the latest state, so calls made from several
    /// threads converge instead of racing.
    private func reconcile() {
        applied.withLock { mirror in
            guard !mirror.closed else { return }
            reconcileConfiguration(&mirror)
            let target = state.withLock { $0.engineTarget }
            if target.suspended != mirror.suspended {
                engine.setSuspended(target.suspended)
                mirror.suspended = target.suspended
            }
            for (id, wanted) in target.streams.sorted(by: { $0.key < $1.key }) {
                guard let current = mirror.streams[id] else { continue }
                if wanted.gain != current.gain {
                    let ramp = wanted.gain < current.gain ? policy.fadeDown : policy.fadeUp
                    engine.setGain(wanted.gain, ramp: ramp, stream: id)
                }
                if wanted.paused != current.paused {
                    engine.setPaused(wanted.paused, stream: id)
                }
                mirror.streams[id] = wanted
            }
        }
    }

    private func reconcileConfiguration(_ mirror: inout EngineMirror) {
        // Each failed activation removes the leases that asked for it, so this settles within a few
        // rounds; the bound only guards against an engine that changes its mind.
        for _ in 0..<4 {
            let (requested, active) = state.withLock { ($0.requestedConfiguration, $0.appliedConfiguration) }
            guard requested != active else { return }
            guard let requested else {
                if mirror.capturing {
                    engine.stopCapture()
                    mirror.capturing = false
                }
                engine.deactivate(notifyingOthers: policy.notifyOthersOnDeactivation)
                mutate { $0.deactivated() }
                continue
            }
            do {
                try engine.activate(requested)
                if requested.category.recordsInput, !mirror.capturing {
                    do {
                        try engine.startCapture(into: voiceInput)
                    } catch {
                        // Undo the half-done switch so the engine matches what the session reports.
                        if let active {
                            try? engine.activate(active)
                        } else {
                            engine.deactivate(notifyingOthers: false)
                        }
                        throw error
                    }
                    mirror.capturing = true
                }
            } catch {
                let message = (error as? SessionError)?.message ?? "\(error)"
                logger.error(
                    "engine refused configuration", metadata: ["configuration": "\(requested)", "error": "\(message)"])
                let refused = mutate { $0.activationFailed(requested, message: message) }
                if refused.isEmpty { return }
                continue
            }
            if !requested.category.recordsInput, mirror.capturing {
                engine.stopCapture()
                mirror.capturing = false
            }
            mutate { $0.activationSucceeded(requested) }
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

    static func wrap(_ error: any Error, code: SessionError.Code, doing what: String) -> SessionError {
        if let error = error as? SessionError { return error }
        return SessionError(code: code, message: "could not \(what): \(error)")
    }
}
