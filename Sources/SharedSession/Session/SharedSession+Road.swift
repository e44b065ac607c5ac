/// The one road of every request: mutate, record, perform, deliver.
///
/// 1. The state applies the request under its lock (``SessionState/apply(_:at:)``): it checks the
///    request's values, and hands out the ids of what it makes in the step's outcome; `read` takes
///    what the caller needs from the state in the same lock.
/// 2. The input observers (a recorder) are told the request as a ``SessionInput``, made once from the
///    request and its outcome, with the ids the state handed out (``SessionRequest/recorded(as:)``).
/// 3. The effects are performed in order under the lane, so concurrent callers' effects reach the
///    engine in the order of their changes, but with the state unlocked, so snapshots never wait for
///    the engine. An activation's or a capture's outcome is a request too, and goes down the same road.
/// 4. The events are delivered with no lock held.
///
/// A request that can be refused goes through ``submitRefusable(_:refusal:)``: the refusal, one
/// ``SessionError`` from where it was decided, is on the record once and thrown to the caller.
extension SharedSession {
    @discardableResult
    func submit(_ request: SessionRequest) -> SessionState.Outcome {
        submit(request) { _, outcome in outcome }
    }

    /// Sends `request` down the road. `read` runs in the state's lock right after the request;
    /// `finish` runs under the lane after the effects were performed, for a caller that must see their
    /// outcome (an acquire waiting for its activation).
    func submit<R: Sendable, S: Sendable>(
        _ request: SessionRequest, read: (inout SessionState, SessionState.Outcome) -> R, finish: (R) -> S
    ) -> S {
        let (result, queued) = lane.withLock { lane -> (S, Bool) in
            let (read, queued) = run(request, &lane, read: read)
            return (finish(read), queued)
        }
        // Nothing queued by this request: whatever is pending was queued by a caller that drains it.
        if queued { delivery.drain(from: self) }
        return result
    }

    /// Sends `request` down the road; `read` runs in the state's lock right after it.
    func submit<R: Sendable>(
        _ request: SessionRequest, read: (inout SessionState, SessionState.Outcome) -> R
    ) -> R {
        submit(request, read: read) { $0 }
    }

    /// The door of a request that can be refused: sends it down the road and returns its outcome, or
    /// throws the error that refused it. The state refuses a value out of range and what a unit's
    /// limits do not allow; `refusal` refuses an outcome the state took without refusing (a volume
    /// for a stream that is not open). Either way the refusal is on the record once, with its
    /// `requestRejected` event, before it is thrown.
    @discardableResult
    func submitRefusable(
        _ request: SessionRequest, refusal: (SessionState.Outcome) -> SessionError? = { _ in nil }
    ) throws(SessionError) -> SessionState.Outcome {
        let (outcome, queued) = lane.withLock { lane in runRefusable(request, &lane, refusal: refusal) }
        if queued { delivery.drain(from: self) }
        switch outcome {
        case .rejected(let error), .refused(let error): throw error
        default: return outcome
        }
    }

    /// ``submitRefusable(_:refusal:)`` for a caller that holds the lane already. Returns the outcome,
    /// `rejected` with the error if `refusal` refused it, and whether events were queued for delivery.
    /// An outcome, not a `Result`: the road copies what it returns, and this is the path of every duck.
    func runRefusable(
        _ request: SessionRequest, _ lane: inout Lane, refusal: (SessionState.Outcome) -> SessionError? = { _ in nil }
    ) -> (SessionState.Outcome, Bool) {
        let (outcome, queued) = run(request, &lane) { _, outcome in outcome }
        switch outcome {
        case .rejected, .refused:
            return (outcome, queued)
        default:
            guard let error = refusal(outcome) else { return (outcome, queued) }
            // Refused after the state took it: the request is on the record as it applied, the
            // refusal after it.
            let (_, refusedQueued) = run(.rejected(error), &lane) { _, _ in () }
            return (.rejected(error), queued || refusedQueued)
        }
    }

    /// The road under the lane, for a caller that holds it already: applies, records, performs.
    /// Returns what `read` took and whether events were queued for delivery.
    func run<R: Sendable>(
        _ request: SessionRequest, _ lane: inout Lane, read: (inout SessionState, SessionState.Outcome) -> R
    ) -> (R, Bool) {
        let now = clock.now()
        let deliver = delivery.hasReceivers
        let (outcome, effects, read) = state.withLock { state in
            state.log.reuse(&lane.effects)
            state.log.emitsEvents = deliver || !lane.observers.isEmpty
            let step = state.apply(request, at: now)
            return (step.outcome, step.effects, read(&state, step.outcome))
        }
        notify(request, as: outcome, at: now, &lane)
        return (read, perform(effects, delivering: deliver, at: now, &lane))
    }

    /// Tells the observers `request`, as `outcome` records it, at `now`.
    private func notify(
        _ request: SessionRequest, as outcome: SessionState.Outcome, at now: ContinuousClock.Instant,
        _ lane: inout Lane
    ) {
        guard !lane.observers.isEmpty else { return }
        notify(request.recorded(as: outcome), at: now, &lane)
    }

    /// Tells the observers `input` at `now`.
    private func notify(_ input: SessionInput, at now: ContinuousClock.Instant, _ lane: inout Lane) {
        guard !lane.observers.isEmpty else { return }
        for observer in lane.observers.values { observer.session(self, received: input, at: now) }
    }

    private func notify(emitted event: SessionEvent, _ lane: inout Lane) {
        guard !lane.observers.isEmpty else { return }
        let now = clock.now()
        for observer in lane.observers.values { observer.session(self, emitted: event, at: now) }
    }

    /// Performs effects in order; an activation's or a capture's outcome goes back into the state as
    /// an input, and the effects that returns are performed next. Events go to the input observers,
    /// and are queued for delivery if `deliver`; returns whether any were. The buffer goes back to the
    /// lane for the next input.
    private func perform(
        _ effects: consuming [SessionEffect], delivering deliver: Bool, at now: ContinuousClock.Instant,
        _ lane: inout Lane
    ) -> Bool {
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
                var refused: String?
                do {
                    try engine.activate(configuration)
                } catch {
                    logger.error(
                        "engine refused configuration",
                        metadata: ["configuration": "\(configuration)", "error": "\(error.message)"])
                    refused = error.message
                }
                queue += outcome(.activationOutcome(configuration, refused: refused), at: now, &lane)
            case .startCapture:
                var refused: String?
                do {
                    try engine.startCapture(into: voiceInput)
                } catch {
                    logger.error("voice capture refused", metadata: ["error": "\(error.message)"])
                    refused = error.message
                }
                queue += outcome(.captureOutcome(refused: refused), at: now, &lane)
            default:
                apply(effect, &lane)
            }
        }
        let queued = !lane.events.isEmpty
        if queued {
            delivery.enqueue(lane.events)
            lane.events.removeAll(keepingCapacity: true)
        }
        if queue.capacity > lane.effects.capacity {
            queue.removeAll(keepingCapacity: true)
            lane.effects = queue
        }
        return queued
    }

    /// An engine call's outcome, as a request of its own: applied, then recorded.
    private func outcome(
        _ request: SessionRequest, at now: ContinuousClock.Instant, _ lane: inout Lane
    ) -> [SessionEffect] {
        let step = state.withLock { $0.apply(request, at: now) }
        notify(request, as: step.outcome, at: now, &lane)
        return step.effects
    }

    /// Performs an effect that has no outcome.
    func apply(_ effect: SessionEffect, _ lane: inout Lane) {
        switch effect {
        case .restore(let configuration):
            // Undo a half-done switch so the engine matches what the session reports; if even that is
            // refused, the engine's next activation starts from a clean slate anyway. Its outcome is
            // recorded like any activation's, so a replay's engine answers it in turn; the state has no
            // activation waiting then, so it ignores it.
            if let configuration {
                let refused: String?
                do {
                    try engine.activate(configuration)
                    refused = nil
                } catch {
                    refused = error.message
                }
                notify(SessionInput(.activationOutcome(configuration, refused: refused)), at: clock.now(), &lane)
            } else {
                engine.deactivate(notifyingOthers: false)
            }
        case .deactivate(let notifying): engine.deactivate(notifyingOthers: notifying)
        case .stopCapture: engine.stopCapture()
        case .setSuspended(let suspended): engine.setSuspended(suspended)
        case .setGain(let id, let gain, let ramp): lane.controls[id]?.setGain(gain, ramp: ramp)
        case .setPaused(let id, let paused): lane.controls[id]?.setPaused(paused)
        case .setActivityDuck(let id, let gain, let volume, let followed):
            followActivity(id, gain: gain, volume: volume, followed, &lane)
        case .closeStream(let id):
            engine.closeStream(id)
            lane.controls[id] = nil
        case .activate, .startCapture, .emit: break
        }
    }

    private func followActivity(
        _ id: StreamID, gain: Float, volume: Float, _ followed: [FollowedSource], _ lane: inout Lane
    ) {
        // The engine's renderer takes the meters and their loudness slots side by side.
        var meters: [ActivityMeter] = []
        var slots: [LoudnessSlot?] = []
        let voice = policy.voiceActivity
        for source in followed {
            let meter: ActivityMeter?
            switch source.source {
            case .stream(let stream): meter = lane.controls[stream]?.activityMeter()
            case .voiceInput: meter = voiceInput.activity
            }
            guard let meter else { continue }
            meter.configure(threshold: voice.linearThreshold, holdFrames: engine.format.frames(in: voice.hold))
            if source.loudness != nil { meter.measureLoudness() }
            lane.meters[ObjectIdentifier(meter)] = meter
            meters.append(meter)
            slots.append(source.loudness)
        }
        lane.controls[id]?.setActivityDuck(
            gain: gain, following: meters,
            loudness: LoudnessFollowing(slots: slots, policy: policy.loudnessDuck, volume: volume),
            attack: voice.attack, release: voice.release)
    }
}

extension SessionRequest {
    /// The request as a recording keeps it: with the id the state handed out, as `outcome` says; a
    /// refusal the state decided before taking it is recorded as `rejected`.
    func recorded(as outcome: SessionState.Outcome) -> SessionInput {
        switch outcome {
        case .rejected(let error): SessionInput(.rejected(error))
        case .lease(let id), .duck(let id, _, _): SessionInput(self, handedOut: .lease(id))
        case .opened(let id): SessionInput(self, handedOut: .stream(id))
        case .applied, .ignored, .refused: SessionInput(self)
        }
    }
}
