/// What units and the host ask of the session. Each method builds one ``SessionRequest`` and sends
/// it down the road (`submit`). A request the session refuses (a value out of range, a unit's limits)
/// throws the ``SessionError`` the state refused it with, after the refusal was recorded with its
/// `requestRejected` event; nothing held changes.
extension SharedSession {
    // MARK: Session leases

    /// Asks for a session of `type` on behalf of `owner` and returns the lease that holds it.
    ///
    /// The first lease activates the session with the policy's configuration for its type; a voice
    /// lease switches an active generic session to the voice configuration. The owner's name shows in
    /// ``snapshot`` for as long as the lease lives, so a leak can be found by name.
    ///
    /// - Throws: ``SessionError`` with code `activationRefused` if the engine refused the
    ///   configuration, or `limitExceeded` if the unit may not take the voice session; the session and
    ///   every lease already held stay as they were.
    public func acquire(_ type: AudioSessionType, owner: String) throws(SessionError) -> SessionLease {
        let (id, granted) = submitAcquire(type, owner: owner)
        switch granted {
        case .success(let type):
            return SessionLease(id: id, type: type, owner: owner, session: self)
        case .failure(let refusal):
            logger.error("session lease refused", metadata: ["owner": "\(owner)", "error": "\(refusal)"])
            throw refusal
        }
    }

    /// The road of an acquire: the id the state gave the lease, and the type it was granted as or the
    /// error that refused it.
    private func submitAcquire(
        _ type: AudioSessionType, owner: String
    ) -> (LeaseID, Result<AudioSessionType, SessionError>) {
        submit(.acquire(type, owner: owner)) { state, outcome -> (LeaseID, AudioSessionType?) in
            guard case .lease(let id) = outcome else { preconditionFailure("an acquire always makes a lease") }
            return (id, state.grantedType(id))
        } finish: { id, grantedAtOnce in
            // Granted at once (its configuration was active): its effects started no activation, so
            // nothing they did can take the grant back. Otherwise the activation's outcome is in: the
            // lease is granted (as the type its unit's limits allow), or refused with the reason.
            if let grantedAtOnce { return (id, .success(grantedAtOnce)) }
            return state.withLock { state in
                if let granted = state.grantedType(id) { return (id, .success(granted)) }
                let lost = SessionError(
                    code: .activationRefused, message: "the session of \(owner) was neither granted nor refused: retry")
                return (id, .failure(state.takeRefusal(id) ?? lost))
            }
        }
    }

    /// Sends a recorded input down the road as the request it was made of, for a replay: a fold over a
    /// recording's inputs. Returns the id of the lease it made, if it made one (a replay compares it
    /// with the recorded one).
    package func submitRecorded(_ input: SessionInput) -> LeaseID? {
        let request = input.request
        if case .acquire(let type, let owner) = request { return submitAcquire(type, owner: owner).0 }
        switch submit(request) {
        case .lease(let id): return id
        case .duck(let id, _, _): return id
        default: return nil
        }
    }

    func releaseLease(_ id: LeaseID, owner: String, dropped: Bool) {
        let outcome = submit(.releaseLease(id, dropped: dropped))
        if dropped, outcome == .applied {
            logger.warning(
                "session lease dropped without release()", metadata: ["owner": "\(owner)", "lease": "\(id)"])
        }
    }

    /// Records that a unit gave back everything it held, after its leases were released: a bridge's
    /// teardown, or a remote unit's connection closing (`package`: SharedSessionRemote's server).
    package func unitReleased(owner: String, reason: String, sessions: Int, ducks: Int) {
        logger.notice(
            "unit released",
            metadata: ["owner": "\(owner)", "reason": "\(reason)", "sessions": "\(sessions)", "ducks": "\(ducks)"])
        submit(.unitReleased(owner: owner, reason: reason))
    }

    /// Records a release with nothing to release (`package`: SharedSessionRemote's server reports a
    /// remote unit's unbalanced disable calls through it).
    package func ignoredRelease(owner: String, what: String, cause: EventCause) {
        logger.warning("release ignored: nothing to release", metadata: ["owner": "\(owner)", "what": "\(what)"])
        submit(.ignoredRelease(owner: owner, what: what, cause: cause))
    }

    // MARK: Ducking

    /// Lowers the main stream to ``mainVolume`` × the policy's duck level while the lease lives.
    /// Ducks stack without compounding; the last one released restores the host's current volume.
    ///
    /// A request beyond the unit's limits that the policy refuses returns a lease that is already
    /// released, with a `requestRejected` event; use ``duck(_:)`` to get the error thrown.
    public func duck(owner: String) -> DuckLease {
        duckOrRefused(DuckRequest(owner: owner))
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
        duckOrRefused(DuckRequest(owner: owner, style: .pause))
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
        let outcome: SessionState.Outcome
        do {
            outcome = try submitRefusable(.duck(request))
        } catch {
            logger.error("duck refused", metadata: ["owner": "\(request.owner)", "error": "\(error)"])
            throw error
        }
        guard case .duck(let id, let style, let expires) = outcome else {
            preconditionFailure("an admitted duck request makes a duck")
        }
        // Read apart from the outcome (see `SessionState.Outcome.duck`); gone if already released.
        if expires, let deadline = state.withLock({ $0.duckStack.info(id)?.deadline }) { scheduleExpiry(at: deadline) }
        return DuckLease(id: id, style: style, owner: request.owner, session: self)
    }

    private func duckOrRefused(_ request: DuckRequest) -> DuckLease {
        do {
            return try duck(request)
        } catch {
            return DuckLease(refused: request, session: self)
        }
    }

    func releaseDuck(_ id: LeaseID, owner: String, dropped: Bool) {
        let outcome = submit(.releaseDuck(id, dropped: dropped))
        if dropped, outcome == .applied {
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
        try submitRefusable(.setMainVolume(volume))
    }

    /// The host presses play: the main stream plays unless an interruption is in progress or a pause
    /// request came after this call. Also lifts an interruption whose end never came.
    public func play() {
        submit(.play)
    }

    /// The host presses pause. Nothing resumes the main stream until the host plays again.
    public func pause() {
        submit(.pause)
    }

    /// Suspends rendering by hand (Wwise's `Suspend`). With `renderAnyway` the sources keep running
    /// and only the output is muted, so playback does not fall behind.
    public func suspend(renderAnyway: Bool = false) {
        submit(.suspend(renderAnyway: renderAnyway))
    }

    /// Ends a ``suspend(renderAnyway:)`` (Wwise's `WakeupFromSuspend`).
    public func wakeFromSuspend() {
        submit(.wakeFromSuspend)
    }

    /// Applies a platform event: an interruption, a route change, the app's lifecycle, other apps'
    /// audio.
    public func handle(_ event: SystemEvent) {
        if submit(.system(event)) == .ignored {
            logger.debug("system event changed nothing", metadata: ["event": "\(event)"])
        }
    }
}
