/// The handlers ``SessionState/apply(_:at:)`` dispatches to: each hands the request to the part that
/// owns its data, inside ``SessionState/input(_:_:)`` (the events of what changed, then a settle)
/// where the request can change what the engine should have.
extension SessionState {
    // MARK: Leases

    /// Adds a session lease. It is granted at once if the configuration it needs is already active;
    /// otherwise the settle activates it, and the outcome grants it (or refuses it). A voice lease for
    /// a unit that may not take the voice session is refused (with a `requestRejected` event) or
    /// granted as generic, as its limits say.
    mutating func leaseRequested(_ requested: AudioSessionType, owner: String, at now: ContinuousClock.Instant)
        -> Outcome
    {
        let limits = policy.limits(for: owner)
        let id = takeLeaseID()
        var type = requested
        var limited = false
        if requested == .voice, !limits.mayTakeVoice {
            if limits.excess == .refuse {
                let error = SessionError(
                    code: .limitExceeded,
                    message: "\(owner) may not take the voice session (its unit limits say mayTakeVoice: false): "
                        + "ask for a generic session, or change the host's SessionPolicy.unitLimits")
                leaseBook.refuse(id, error)
                log.emit(.requestRejected(error), .unit(owner: owner))
                return .lease(id)
            }
            type = .generic
            limited = true
        }
        let info = LeaseInfo(id: id, owner: owner, type: type, acquiredAt: now)
        let cause = EventCause.sessionLease(id, owner: owner)
        input(cause) { state in
            if limited { state.log.emit(.limitApplied(owner: owner, limit: .mayNotTakeVoice), cause) }
            state.leaseBook.add(info, state.policy, &state.log)
        }
        return .lease(id)
    }

    mutating func leaseReleased(_ id: LeaseID, dropped: Bool) -> Outcome {
        guard let info = leaseBook.record(id)?.info else { return .ignored }
        let cause = EventCause.sessionLease(id, owner: info.owner)
        input(cause) { state in
            state.leaseBook.remove(id)
            state.log.emit(dropped ? .leaseDropped(info) : .leaseReleased(info), cause)
        }
        return .applied
    }

    // MARK: Ducks

    /// Adds a duck or pause request within its unit's limits, with the next lease id, or refuses it
    /// with a `requestRejected` event (a refused request takes no id).
    mutating func duckRequested(_ request: DuckRequest, at now: ContinuousClock.Instant) -> Outcome {
        var followedIsOpen = true
        if case .stream(let followed)? = request.style.followedSource { followedIsOpen = streams.isOpen(followed) }
        let known = DuckStack.Streams(main: mainStreamID, mainIsExempt: isMainExempt, followedIsOpen: followedIsOpen)
        let admission: DuckStack.Admission
        switch DuckStack.admit(request, at: now, policy: policy, streams: known) {
        case .failure(let error):
            log.emit(.requestRejected(error), .unit(owner: request.owner))
            return .refused(error)
        case .success(let admitted): admission = admitted
        }
        let info = admission.duck(takeLeaseID())
        let cause = EventCause.duckLease(info.id, owner: info.owner)
        input(cause) { state in
            for limit in info.appliedLimits { state.log.emit(.limitApplied(owner: info.owner, limit: limit), cause) }
            state.log.emit(.duckAcquired(info), cause)
            state.duckStack.insert(info, policyLevel: state.policy.duckLevel, loudness: state.policy.loudnessDuck)
        }
        return .duck(info.id, style: info.style, expires: info.deadline != nil)
    }

    mutating func duckReleased(_ id: LeaseID, dropped: Bool) -> Outcome {
        guard let info = duckStack.info(id) else { return .ignored }
        let cause = EventCause.duckLease(id, owner: info.owner)
        input(cause) { state in
            state.duckStack.remove(id)
            state.log.emit(dropped ? .duckDropped(info) : .duckReleased(info), cause)
        }
        return .applied
    }

    /// Releases every duck whose deadline has come, as if its holder had, with a `duckExpired` event.
    mutating func deadlinesDue(at now: ContinuousClock.Instant) -> Outcome {
        let due = duckStack.due(at: now)
        guard let first = due.first else { return .ignored }
        for info in due {
            let cause = EventCause.duckLease(info.id, owner: info.owner)
            change(cause) { state in
                state.duckStack.remove(info.id)
                state.log.emit(.duckExpired(info), cause)
            }
        }
        settle(.duckLease(first.id, owner: first.owner))
        return .applied
    }

    // MARK: Events from the platform and the engine

    mutating func systemEvent(_ event: SystemEvent) -> Outcome {
        var handled = false
        // Settled even when the event does not apply, so a configuration refused before is retried.
        input(.system(event)) { state in handled = state.context.handle(event, &state.log) }
        return handled ? .applied : .ignored
    }

    mutating func engineEvent(_ event: EngineEvent, at now: ContinuousClock.Instant) -> Outcome {
        let cause = EventCause.engine(event)
        switch event {
        case .system(let system):
            return systemEvent(system)
        case .externalVolumeChange(let stream, let volume):
            if stream == mainStreamID {
                input(cause) { $0.context.hostVolume = volume }
                return .applied
            }
            guard let index = streams.index(of: stream) else { return .ignored }
            let old = streams.records[index].volume
            input(cause) { state in
                state.streams.setVolume(volume, at: index)
                state.log.emit(.streamVolumeChanged(stream, from: old, to: volume), cause)
            }
        case .streamFault(let stream, let reason):
            log.emit(.streamFault(stream, reason: reason), cause)
        case .connectionLost(let reason):
            context.engineConnected = false
            log.emit(.connectionLost(reason: reason), cause)
        case .reconnected(let attempts, let downtime):
            context.engineConnected = true
            log.emit(.reconnected(attempts: attempts, downtime: downtime), cause)
            if !isClosed {
                streams.resync(targets, policy, &log)
                log.append(.setSuspended(suspendedApplied))
            }
            input(cause) { _ in }
        case .quantumChanged(let frames):
            context.quantum = frames
            log.emit(.quantumChanged(frames: frames), cause)
        case .streamPlaying(let stream, let playing):
            return streamPlaying(stream, playing, at: now)
        case .outputLatencyChanged(let stream, let from, let to):
            log.emit(.outputLatencyChanged(stream, from: from, to: to), cause)
        case .outputLatencyRejected(let stream, let reason):
            log.emit(.outputLatencyRejected(stream, reason: reason), cause)
        case .streamRenegotiated(let stream, let paused):
            log.emit(.streamRenegotiated(stream, paused: paused), cause)
        case .loudnessDuckChanged(let stream, let reading):
            if stream == mainStreamID { context.mainLoudnessDuck = reading }
            log.emit(.loudnessDuckChanged(stream, reading), cause)
        }
        return .applied
    }

    /// A stream that ducks while it plays started or stopped: its owner's duck is requested (within the
    /// owner's limits, refused with a `requestRejected` event like any request) or released.
    private mutating func streamPlaying(_ id: StreamID, _ playing: Bool, at now: ContinuousClock.Instant) -> Outcome {
        guard !isClosed, let index = streams.index(of: id), !streams.records[index].isMain,
            let owner = streams.records[index].owner
        else { return .ignored }
        let held = ducksOfPlayingStreams[id].flatMap { duckStack.info($0) == nil ? nil : $0 }
        if playing {
            guard held == nil else { return .ignored }
            guard case .duck(let duck, _, _) = duckRequested(DuckRequest(owner: owner), at: now) else {
                return .applied
            }
            ducksOfPlayingStreams[id] = duck
            return .applied
        }
        ducksOfPlayingStreams[id] = nil
        guard let held else { return .ignored }
        return duckReleased(held, dropped: false)
    }

    // MARK: Streams

    /// The id and the starting gain and play state of a stream about to be opened on the engine: the
    /// id its ``SessionRequest/openStream(_:owner:volume:isMain:)`` gets once the engine opened it.
    ///
    /// - Throws: `invalidValue` for a volume ``SessionRequest/validate()`` refuses, `sessionClosed`
    ///   after the session closed, `mainStreamAlreadyOpen` for a second main stream.
    func opening(_ descriptor: StreamDescriptor, isMain: Bool, volume: Float) throws(SessionError) -> (
        StreamID, StreamTarget
    ) {
        try SessionRequest.openStream(descriptor, owner: nil, volume: volume, isMain: isMain).validate()
        guard !isClosed else {
            throw SessionError(
                code: .sessionClosed,
                message: "the session is closed, so \(descriptor.name) cannot be opened: make a new SharedSession")
        }
        if isMain, let existing = streams.records.first(where: \.isMain) {
            throw SessionError(
                code: .mainStreamAlreadyOpen,
                message: "a main stream (\(existing.descriptor.name), \(existing.id)) is already open: "
                    + "close it before opening \(descriptor.name), or open \(descriptor.name) as an overlay stream")
        }
        return (streams.nextID, openingTarget(descriptor, isMain: isMain, volume: volume))
    }

    /// The gain and play state a stream starts at: its target once it is open, so a main stream marked
    /// exempt or as background music starts where it will stay (not ducked or muted, then ramped). No
    /// voice-activity duck: the engine opens a stream without one, and the settle after tells it.
    private func openingTarget(_ descriptor: StreamDescriptor, isMain: Bool, volume: Float) -> StreamTarget {
        var opened = self
        opened.streams.add(
            StreamReconciler.Record(
                id: streams.nextID, descriptor: descriptor, isMain: isMain, owner: nil, volume: volume,
                applied: StreamTarget(gain: 0, paused: false)))
        var target = opened.targets.target(isMain: isMain, descriptor: descriptor, volume: volume)
        target.activity = nil
        return target
    }

    /// The engine opened a stream at the id and target ``opening(_:isMain:volume:)`` gave. The stream
    /// joins the state inside the input, so what its opening changed (an exempt main stream is no
    /// longer ducked) is reported like any other change.
    mutating func streamAdded(_ descriptor: StreamDescriptor, owner: String?, volume: Float, isMain: Bool) -> Outcome {
        let record = StreamReconciler.Record(
            id: streams.nextID, descriptor: descriptor, isMain: isMain, owner: owner, volume: volume,
            applied: openingTarget(descriptor, isMain: isMain, volume: volume))
        input(record.cause) { state in
            state.streams.add(record)
            let info = state.info(of: record)
            state.log.emit(.streamOpened(info), record.cause)
        }
        return .opened(record.id)
    }

    /// Closes a stream: nothing happens if it is not open, or if the session was closed (which
    /// closed every stream on the engine already).
    mutating func streamClosed(_ id: StreamID) -> Outcome {
        guard !isClosed, let index = streams.index(of: id) else { return .ignored }
        let record = streams.records[index]
        let info = info(of: record)
        if let held = ducksOfPlayingStreams.removeValue(forKey: id) { _ = duckReleased(held, dropped: false) }
        log.append(.closeStream(id))
        input(record.cause) { state in
            state.streams.remove(at: index)
            state.log.emit(.streamClosed(info), record.cause)
        }
        return .applied
    }

    /// Sets a stream's own volume (the main stream's is the host's volume).
    mutating func streamVolumeSet(_ id: StreamID, _ volume: Float) -> Outcome {
        guard let index = streams.index(of: id) else { return .ignored }
        if streams.records[index].isMain {
            input(.host) { $0.context.hostVolume = volume }
            return .applied
        }
        let old = streams.records[index].volume
        let cause = streams.records[index].cause
        input(cause) { state in
            state.streams.setVolume(volume, at: index)
            if old != volume { state.log.emit(.streamVolumeChanged(id, from: old, to: volume), cause) }
        }
        return .applied
    }

    // MARK: Outcomes of engine calls

    /// The engine's answer to the activation just performed. Accepted: the capture starts next if the
    /// configuration records input (and stops if it does not); otherwise the waiting leases are
    /// granted and the change reported. Refused: the leases waiting for it are refused and removed;
    /// everything else stays as it was.
    mutating func activationOutcome(refused message: String?) -> Outcome {
        guard let activation = leaseBook.activation else { return .ignored }
        if let message {
            refuseActivation(message: message)
            return .applied
        }
        let recordsInput = activation.configuration.category.recordsInput
        if recordsInput, !leaseBook.capturing {
            log.append(.startCapture)
            return .applied
        }
        if !recordsInput, leaseBook.capturing {
            log.append(.stopCapture)
            leaseBook.capturing = false
        }
        complete(activation.cause)
        return .applied
    }

    /// The engine's answer to starting the capture of a recording configuration: started, the switch
    /// is complete; refused, the engine goes back to the configuration it had and the switch is refused
    /// like an activation.
    mutating func captureOutcome(refused message: String?) -> Outcome {
        guard let activation = leaseBook.activation else { return .ignored }
        if let message {
            log.append(.restore(activation.previous))
            refuseActivation(message: message)
        } else {
            leaseBook.capturing = true
            complete(activation.cause)
        }
        return .applied
    }

    private mutating func complete(_ cause: EventCause) {
        change(cause) { state in state.leaseBook.complete(state.policy, &state.log) }
        settle(cause)
    }

    private mutating func refuseActivation(message: String) {
        guard let cause = leaseBook.activation?.cause else { return }
        var refusedAny = false
        change(cause) { state in
            refusedAny = state.leaseBook.refuseActivation(message: message, state.policy, &state.log)
        }
        // With no lease refused, asking again at once would only be refused again: the next input retries.
        settle(cause, retryingConfiguration: refusedAny)
    }

    // MARK: Closing

    /// Closes the session: stops the capture, closes every stream and deactivates; nothing reaches the
    /// engine afterwards. The leases stay (releasing them changes nothing on the engine).
    mutating func closeSession() -> Outcome {
        guard !isClosed else { return .ignored }
        if leaseBook.capturing {
            log.append(.stopCapture)
            leaseBook.capturing = false
        }
        streams.closeAll(&log)
        if leaseBook.applied != nil { deactivate(.host) }
        isClosed = true
        log.emit(.closed, .host)
        return .applied
    }
}
