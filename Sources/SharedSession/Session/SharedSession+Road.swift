/// The one road of every input: mutate, perform, deliver.
///
/// 1. The state applies the input under its lock (``SessionState/apply(_:at:)``), and `read` takes
///    what the caller needs from the state in the same lock (a lease's id, a duck's record).
/// 2. The input observers (a recorder) are told the input, with the ids the state gave.
/// 3. The effects are performed in order under the lane, so concurrent callers' effects reach the
///    engine in the order of their changes, but with the state unlocked, so snapshots never wait for
///    the engine. An activation's or a capture's outcome is an input too, and goes down the same road.
/// 4. The events are delivered with no lock held.
extension SharedSession {
    @discardableResult
    func submit(_ input: SessionInput) -> SessionState.Outcome {
        submit(input) { _, outcome in outcome }
    }

    /// Sends `input` down the road. `read` runs in the state's lock right after the input; `finish`
    /// runs under the lane after the effects were performed, for a caller that must see their outcome
    /// (an acquire waiting for its activation).
    func submit<R: Sendable>(
        _ input: SessionInput, read: (inout SessionState, SessionState.Outcome) -> R, finish: (R) -> R = { $0 }
    ) -> R {
        let (result, queued) = lane.withLock { lane -> (R, Bool) in
            let (read, queued) = run(input, &lane, read: read)
            return (finish(read), queued)
        }
        // Nothing queued by this input: whatever is pending was queued by a caller that drains it.
        if queued { delivery.drain(from: self) }
        return result
    }

    /// The road under the lane, for a caller that holds it already: applies, records, performs.
    /// Returns what `read` took and whether events were queued for delivery.
    func run<R: Sendable>(
        _ input: SessionInput, _ lane: inout Lane, read: (inout SessionState, SessionState.Outcome) -> R
    ) -> (R, Bool) {
        let now = clock.now()
        let deliver = delivery.hasReceivers
        let (outcome, effects, read) = state.withLock { state in
            state.log.reuse(&lane.effects)
            state.log.emitsEvents = deliver || !lane.observers.isEmpty
            let step = state.apply(input, at: now)
            return (step.outcome, step.effects, read(&state, step.outcome))
        }
        notify(input.recorded(as: outcome), at: now, &lane)
        return (read, perform(effects, delivering: deliver, at: now, &lane))
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

    /// An engine call's outcome, as an input of its own: recorded, then applied.
    private func outcome(
        _ input: SessionInput, at now: ContinuousClock.Instant, _ lane: inout Lane
    ) -> [SessionEffect] {
        notify(input, at: now, &lane)
        return state.withLock { $0.apply(input, at: now).effects }
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
                notify(.activationOutcome(configuration, refused: refused), at: clock.now(), &lane)
            } else {
                engine.deactivate(notifyingOthers: false)
            }
        case .deactivate(let notifying): engine.deactivate(notifyingOthers: notifying)
        case .stopCapture: engine.stopCapture()
        case .setSuspended(let suspended): engine.setSuspended(suspended)
        case .setGain(let id, let gain, let ramp): lane.controls[id]?.setGain(gain, ramp: ramp)
        case .setPaused(let id, let paused): lane.controls[id]?.setPaused(paused)
        case .setActivityDuck(let id, let gain, let sources): followActivity(id, gain: gain, sources, &lane)
        case .closeStream(let id):
            engine.closeStream(id)
            lane.controls[id] = nil
        case .activate, .startCapture, .emit: break
        }
    }

    private func followActivity(_ id: StreamID, gain: Float, _ sources: [ActivitySource], _ lane: inout Lane) {
        var meters: [ActivityMeter] = []
        let voice = policy.voiceActivity
        for source in sources {
            let meter: ActivityMeter?
            switch source {
            case .stream(let followed): meter = lane.controls[followed]?.activityMeter()
            case .voiceInput: meter = voiceInput.activity
            }
            guard let meter else { continue }
            meter.configure(threshold: voice.linearThreshold, holdFrames: engine.format.frames(in: voice.hold))
            lane.meters[ObjectIdentifier(meter)] = meter
            meters.append(meter)
        }
        lane.controls[id]?.setActivityDuck(gain: gain, following: meters, attack: voice.attack, release: voice.release)
    }
}

extension SessionInput {
    /// The input as a recording keeps it: with the id the state gave the lease it made (0 for a duck
    /// request the unit's limits refused).
    func recorded(as outcome: SessionState.Outcome) -> SessionInput {
        switch (self, outcome) {
        case (.acquire(let type, let owner, _), .lease(let id)): .acquire(type, owner: owner, lease: id)
        case (.duck(let request, _), .lease(let id)): .duck(request, lease: id)
        case (.duck(let request, _), _): .duck(request, lease: LeaseID(rawValue: 0))
        default: self
        }
    }
}
