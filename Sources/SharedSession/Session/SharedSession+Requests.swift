/// What units and the host ask of the session. Each method checks its arguments, builds one
/// ``SessionInput`` and sends it down the road (`submit`); a value that fails the check is refused
/// with a typed error and a `requestRejected` event, and nothing held changes.
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
        switch submitAcquire(type, owner: owner) {
        case (let id, .success(let granted)):
            return SessionLease(id: id, type: granted, owner: owner, session: self)
        case (_, .failure(let refusal)):
            logger.error("session lease refused", metadata: ["owner": "\(owner)", "error": "\(refusal)"])
            throw refusal
        }
    }

    /// Where an acquire stands on its road.
    private enum AcquireStep: Sendable {
        case granted(LeaseID, AudioSessionType)
        case waiting(LeaseID)
        case refused(LeaseID, SessionError)
    }

    /// The road of an acquire: the lease's id, and the type it was granted as or why it was refused.
    private func submitAcquire(
        _ type: AudioSessionType, owner: String
    ) -> (LeaseID, Result<AudioSessionType, SessionError>) {
        // A placeholder id: the state gives the lease its id, and the recording keeps that one.
        let input = SessionInput.acquire(type, owner: owner, lease: LeaseID(rawValue: 0))
        let step = submit(input) { state, outcome -> AcquireStep in
            guard case .lease(let id) = outcome else { preconditionFailure("an acquire always makes a lease") }
            return state.grantedType(id).map { .granted(id, $0) } ?? .waiting(id)
        } finish: { step in
            // Granted at once (its configuration was active): its effects started no activation, so
            // nothing they did can take the grant back. Otherwise the activation's outcome is in: the
            // lease is granted (as the type its unit's limits allow), or refused with the reason.
            guard case .waiting(let id) = step else { return step }
            return state.withLock { state in
                if let granted = state.grantedType(id) { return .granted(id, granted) }
                let lost = SessionError(
                    code: .activationRefused, message: "the session of \(owner) was neither granted nor refused: retry")
                return .refused(id, state.takeRefusal(id) ?? lost)
            }
        }
        switch step {
        case .granted(let id, let granted): return (id, .success(granted))
        case .refused(let id, let error): return (id, .failure(error))
        case .waiting(let id): preconditionFailure("\(id) of \(owner): finish always grants or refuses")
        }
    }

    /// Sends a recorded input down the road as it came, for a replay: a fold over a recording's
    /// inputs. Returns the id of the lease it made, if it made one (a replay compares it with the
    /// recorded one).
    package func submitRecorded(_ input: SessionInput) -> LeaseID? {
        if case .acquire(let type, let owner, _) = input { return submitAcquire(type, owner: owner).0 }
        if case .lease(let id) = submit(input) { return id }
        return nil
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

    func reject(_ error: SessionError) {
        submit(.rejected(error))
    }

    /// Runs `check`; an error it throws is rejected (a `requestRejected` event) and rethrown.
    func checked(_ check: () throws(SessionError) -> Void) throws(SessionError) {
        do {
            try check()
        } catch {
            reject(error)
            throw error
        }
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
        let input = SessionInput.duck(request, lease: LeaseID(rawValue: 0))
        let result = submit(input) { state, outcome -> Result<DuckInfo, SessionError> in
            switch outcome {
            case .lease(let id): .success(state.duckInfo(id)!)
            case .refused(let error): .failure(error)
            default: preconditionFailure("a duck request makes a lease or is refused")
            }
        }
        switch result {
        case .success(let info):
            if let deadline = info.deadline { scheduleExpiry(at: deadline) }
            return DuckLease(id: info.id, style: info.style, owner: request.owner, session: self)
        case .failure(let error):
            logger.error("duck refused", metadata: ["owner": "\(request.owner)", "error": "\(error)"])
            throw error
        }
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
        try checked { () throws(SessionError) in try SessionError.checkUnitInterval(volume, name: "mainVolume") }
        submit(.setMainVolume(volume))
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
