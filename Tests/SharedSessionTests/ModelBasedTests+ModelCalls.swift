import SharedSession
import SharedSessionTesting

/// The model's calls: one per call a host, its units, the platform and the engine make on a session,
/// each saying what the session must then show.
extension SessionModel {
    /// `acquire`: the lease's id and the type granted, or the error thrown.
    mutating func acquire(_ type: AudioSessionType, owner: String) -> Result<(LeaseID, AudioSessionType), SessionError>
    {
        let limits = policy.limits(for: owner)
        let id = takeID()
        var granted = type
        var limited = false
        if type == .voice, !limits.mayTakeVoice {
            if limits.excess == .refuse {
                let error = SessionError(code: .limitExceeded, message: "")
                emit(.requestRejected(error), .unit(owner: owner))
                return .failure(error)
            }
            granted = .generic
            limited = true
        }
        let info = LeaseInfo(id: id, owner: owner, type: granted, acquiredAt: now)
        let cause = EventCause.sessionLease(id, owner: owner)
        input(cause) { model in
            if limited { model.emit(.limitApplied(owner: owner, limit: .mayNotTakeVoice), cause) }
            let waitsForActivation = model.configuration != model.requested(adding: granted)
            model.leases.append(Lease(info: info, granted: !waitsForActivation))
            if !waitsForActivation { model.emit(.leaseAcquired(info), cause) }
        }
        guard leases.contains(where: { $0.info.id == id && $0.granted }) else {
            // After close no configuration comes: the lease is refused and forgotten.
            leases.removeAll { $0.info.id == id }
            return .failure(SessionError(code: .sessionClosed, message: ""))
        }
        return .success((id, granted))
    }

    private func requested(adding type: AudioSessionType) -> SessionConfiguration {
        type == .voice || leases.contains(where: { $0.info.type == .voice })
            ? policy.voiceConfiguration : policy.genericConfiguration
    }

    /// A lease given back (`dropped`: let go of without release).
    mutating func releaseLease(_ id: LeaseID, dropped: Bool) {
        guard let index = leases.firstIndex(where: { $0.info.id == id }) else { return }
        let info = leases[index].info
        input(.sessionLease(id, owner: info.owner)) { model in
            model.leases.remove(at: index)
            model.emit(dropped ? .leaseDropped(info) : .leaseReleased(info), .sessionLease(id, owner: info.owner))
        }
    }

    /// A second release of a lease (or of a duck lease, or of a refused duck): only an event.
    mutating func releaseIgnored(owner: String, cause: EventCause) {
        emit(.releaseIgnored(owner: owner, what: ""), cause)
    }

    /// A request refused before it reached the state (an invalid value): an event caused by the host.
    mutating func rejected(_ code: SessionError.Code) {
        emit(.requestRejected(SessionError(code: code, message: "")), .host)
    }

    /// `duck(_:)`: the duck made, within the unit's limits, or the error.
    mutating func duck(_ request: DuckRequest) -> Result<DuckInfo, SessionError> {
        let owner = request.owner
        var level: Float?
        switch request.style {
        case .duck(let requested), .followActivity(_, let requested): level = requested
        case .pause: level = nil
        case .followLoudness:
            // The generator makes none: the loudness duck's depth is decided on the render side, which
            // the model does not render (LoudnessDuckTests covers it).
            preconditionFailure("the model-based generator makes no loudness ducks")
        }
        if let level, !(0...1).contains(level) {
            rejected(.invalidValue)
            return .failure(SessionError(code: .invalidValue, message: ""))
        }
        let limits = policy.limits(for: owner)
        func refuse(_ code: SessionError.Code) -> Result<DuckInfo, SessionError> {
            let error = SessionError(code: code, message: "")
            emit(.requestRejected(error), .unit(owner: owner))
            return .failure(error)
        }
        var style = request.style
        var applied: [UnitLimit] = []
        if case .followActivity(let source, _) = style, !isOpen(source) { return refuse(.unknownStream) }
        if style == .pause, !limits.mayPauseMain {
            if limits.excess == .refuse { return refuse(.limitExceeded) }
            style = .duck(level: max(policy.duckLevel, limits.deepestDuckLevel))
            applied.append(.mayNotPauseMain)
        }
        switch style {
        case .duck(let level) where (level ?? policy.duckLevel) < limits.deepestDuckLevel:
            if limits.excess == .refuse { return refuse(.limitExceeded) }
            style = .duck(level: limits.deepestDuckLevel)
            applied.append(.deepestDuckLevel(limits.deepestDuckLevel))
        case .followActivity(let source, let level) where (level ?? policy.duckLevel) < limits.deepestDuckLevel:
            if limits.excess == .refuse { return refuse(.limitExceeded) }
            style = .followActivity(source, level: limits.deepestDuckLevel)
            applied.append(.deepestDuckLevel(limits.deepestDuckLevel))
        default: break
        }
        var hold = request.maximumHold
        if let maximum = limits.maximumHold, hold == nil || hold! > maximum {
            hold = maximum
            applied.append(.maximumHold(maximum))
        }
        if mainIsExempt, let main { applied.append(.exemptStream(main.id)) }
        let id = takeID()
        let info = DuckInfo(
            id: id, owner: owner, style: style, acquiredAt: now, deadline: hold.map { now + $0 }, appliedLimits: applied
        )
        let cause = EventCause.duckLease(id, owner: owner)
        input(cause) { model in
            for limit in applied { model.emit(.limitApplied(owner: owner, limit: limit), cause) }
            model.emit(.duckAcquired(info), cause)
            if style == .pause { model.hostOverridesPause = false }
            model.ducks.append(info)
        }
        return .success(info)
    }

    /// A duck lease given back: nothing if it is not live (it expired).
    mutating func releaseDuck(_ id: LeaseID, dropped: Bool) {
        guard let index = ducks.firstIndex(where: { $0.id == id }) else { return }
        let info = ducks[index]
        let cause = EventCause.duckLease(id, owner: info.owner)
        input(cause) { model in
            model.ducks.remove(at: index)
            if !model.pauseRequested { model.hostOverridesPause = false }
            model.emit(dropped ? .duckDropped(info) : .duckReleased(info), cause)
        }
    }

    /// The clock moved on to `time` and the session released what was due: each due duck in the order
    /// of its deadline (then of its id), as if its holder had released it.
    mutating func expireDeadlines() {
        let due = ducks.filter { $0.deadline.map { $0 <= now } ?? false }
            .sorted { ($0.deadline!, $0.id.rawValue) < ($1.deadline!, $1.id.rawValue) }
        guard let first = due.first else { return }
        for info in due {
            let cause = EventCause.duckLease(info.id, owner: info.owner)
            change(cause) { model in
                model.ducks.removeAll { $0.id == info.id }
                if !model.pauseRequested { model.hostOverridesPause = false }
                model.emit(.duckExpired(info), cause)
            }
        }
        settle(.duckLease(first.id, owner: first.owner))
    }

    mutating func setMainVolume(_ volume: Float) {
        input(.host) { $0.hostVolume = volume }
    }

    /// The host's play: overrides a live pause request until the next one, and ends an interruption.
    mutating func play() {
        input(.host) { model in
            if model.pauseRequested { model.hostOverridesPause = true }
            model.hostWantsPlay = true
            if model.interruption != .none {
                model.interruption = .none
                model.emit(.interruptionEnded(shouldResume: true), .host)
            }
        }
    }

    mutating func pause() {
        input(.host) { $0.hostWantsPlay = false }
    }

    mutating func suspend(renderAnyway: Bool) {
        input(.host) { $0.manual = renderAnyway }
    }

    mutating func wake() {
        input(.host) { $0.manual = nil }
    }

    mutating func handle(_ event: SystemEvent) {
        let cause = EventCause.system(event)
        input(cause) { model in
            switch event {
            case .interruptionBegan:
                model.interruption = .interrupted(thenWait: model.waitsForHost)
                model.emit(.interruptionBegan, cause)
            case .interruptionEnded(let shouldResume):
                guard case .interrupted(let thenWait) = model.interruption else { return }
                model.interruption = thenWait || !shouldResume ? .waitingForHost : .none
                model.emit(.interruptionEnded(shouldResume: shouldResume), cause)
            case .routeChanged(let change):
                if let output = change.currentOutput { model.route = output }
                if change.reason == .oldDeviceUnavailable { model.hostWantsPlay = false }
                model.emit(.routeChanged(change), cause)
            case .didEnterBackground:
                guard !model.background else { return }
                model.background = true
                model.emit(.backgroundChanged(isInBackground: true), cause)
            case .willEnterForeground:
                if model.background {
                    model.background = false
                    model.emit(.backgroundChanged(isInBackground: false), cause)
                }
                if case .interrupted(let thenWait) = model.interruption {
                    model.interruption = thenWait ? .waitingForHost : .none
                    model.emit(.interruptionEnded(shouldResume: true), cause)
                }
            case .otherAudioStarted, .otherAudioStopped:
                let playing = event == .otherAudioStarted
                guard playing != model.otherAudio else { return }
                model.otherAudio = playing
                model.emit(.otherAudioChanged(isPlaying: playing), cause)
            }
        }
    }

    mutating func engine(_ event: EngineEvent) {
        let cause = EventCause.engine(event)
        switch event {
        case .system(let system):
            handle(system)
        case .externalVolumeChange(let id, let volume):
            guard let index = streams.firstIndex(where: { $0.id == id }) else { return }
            if streams[index].isMain {
                input(cause) { $0.hostVolume = volume }
            } else {
                let old = streams[index].volume
                input(cause) { model in
                    model.streams[index].volume = volume
                    model.emit(.streamVolumeChanged(id, from: old, to: volume), cause)
                }
            }
        case .streamFault(let id, let reason):
            emit(.streamFault(id, reason: reason), cause)
        case .connectionLost(let reason):
            connected = false
            emit(.connectionLost(reason: reason), cause)
        case .reconnected(let attempts, let downtime):
            connected = true
            emit(.reconnected(attempts: attempts, downtime: downtime), cause)
            if !closed {
                // The engine reopened its streams from what it was told: it is told again, each gain
                // as a ramp down (a glide, never a click), then the suspension.
                for index in streams.indices {
                    let wanted = target(streams[index])
                    calls.append(.setGain(streams[index].id, gain: wanted.gain, ramp: policy.fadeDown))
                    calls.append(.setPaused(streams[index].id, paused: wanted.paused))
                    streams[index].told = wanted
                }
                calls.append(.setSuspended(engineSuspended))
            }
            input(cause) { _ in }
        case .quantumChanged(let frames):
            quantum = frames
            emit(.quantumChanged(frames: frames), cause)
        case .outputLatencyChanged(let id, let from, let to):
            // Reported as it came: it changes nothing the session decides.
            emit(.outputLatencyChanged(id, from: from, to: to), cause)
        case .outputLatencyRejected(let id, let reason):
            emit(.outputLatencyRejected(id, reason: reason), cause)
        case .streamRenegotiated(let id, let paused):
            emit(.streamRenegotiated(id, paused: paused), cause)
        case .loudnessDuckChanged(let id, let reading):
            // Reported as it came: it changes nothing the session decides.
            emit(.loudnessDuckChanged(id, reading), cause)
        case .streamPlaying:
            // Never generated: the model's engine renders every stream itself (StreamPlayingTests
            // covers streams that other processes play).
            break
        }
    }

    /// A stream opened: its id, or the error.
    mutating func openStream(
        _ descriptor: StreamDescriptor, isMain: Bool, owner: String?, volume: Float
    ) -> Result<StreamID, SessionError> {
        guard !closed else {
            rejected(.sessionClosed)
            return .failure(SessionError(code: .sessionClosed, message: ""))
        }
        let id = StreamID(rawValue: nextStream)
        nextStream += 1
        var stream = Stream(
            id: id, descriptor: descriptor, isMain: isMain, owner: owner, volume: volume,
            told: Told(gain: 0, paused: false, activity: nil))
        // The engine opens it at its target gain and play state; a voice-activity duck follows in a call
        // of its own.
        let cause = owner.map { EventCause.unit(owner: $0) } ?? .host
        input(cause) { model in
            model.streams.append(stream)
            let opened = model.target(stream)
            stream.told = Told(gain: opened.gain, paused: opened.paused, activity: nil)
            model.streams[model.streams.count - 1].told = stream.told
            model.calls.append(.openStream(id, name: descriptor.name, gain: opened.gain, paused: opened.paused))
            model.emit(.streamOpened(model.info(stream)), cause)
        }
        return .success(id)
    }

    /// A stream closed: nothing if it is not open, or after the session closed (which closed them all).
    mutating func closeStream(_ id: StreamID) {
        guard !closed, let index = streams.firstIndex(where: { $0.id == id }) else { return }
        let stream = streams[index]
        let info = info(stream)
        let cause = stream.owner.map { EventCause.unit(owner: $0) } ?? .host
        calls.append(.closeStream(id))
        input(cause) { model in
            model.streams.remove(at: index)
            model.emit(.streamClosed(info), cause)
        }
    }

    /// A stream's own volume (the main stream's is the host's): `false` if it is not open.
    mutating func setStreamVolume(_ id: StreamID, _ volume: Float) -> Bool {
        guard let index = streams.firstIndex(where: { $0.id == id }) else {
            rejected(.unknownStream)
            return false
        }
        if streams[index].isMain {
            input(.host) { $0.hostVolume = volume }
            return true
        }
        let old = streams[index].volume
        let cause = streams[index].owner.map { EventCause.unit(owner: $0) } ?? .host
        input(cause) { model in
            model.streams[index].volume = volume
            if old != volume { model.emit(.streamVolumeChanged(id, from: old, to: volume), cause) }
        }
        return true
    }

    /// `close()`: the capture stops, every stream closes, the session deactivates, and nothing more
    /// reaches the engine. Leases, ducks and the streams' records stay.
    mutating func close() {
        guard !closed else { return }
        if capturing {
            calls.append(.stopCapture)
            capturing = false
        }
        for id in streams.map(\.id).sorted() { calls.append(.closeStream(id)) }
        if configuration != nil { deactivate(.host) }
        closed = true
        emit(.closed, .host)
    }
}
