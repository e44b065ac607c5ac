import SharedSession

/// The engine a replay runs on: an `OfflineEngine` that answers activations, captures and stream
/// opens as the recorded engine did, in order, and reports only the engine events the recording
/// holds (never its own quantum changes).
final class ReplayEngine: AudioEngine {
    /// The mixer that renders the replay.
    let offline: OfflineEngine

    private struct Answers {
        var activations: [(SessionConfiguration, refused: String?)]
        var captures: [String?]
        /// Every stream open, in order: `nil` if it opened, else the engine's error.
        var opens: [SessionError?]
        /// Calls the recording held no answer for, or answered for another configuration.
        var surprises: [String] = []
        var handler: (@Sendable (EngineEvent) -> Void)?
    }

    private let answers: Locked<Answers>

    init(format: AudioFormat, input: (any AudioSource)?, recording: SessionRecording) {
        offline = OfflineEngine(format: format, input: input)
        let inputs = recording.inputs.compactMap {
            if case .input(let input) = $0.content { input.request } else { nil }
        }
        var activations: [(SessionConfiguration, refused: String?)] = []
        var captures: [String?] = []
        var opens: [SessionError?] = []
        for (index, input) in inputs.enumerated() {
            switch input {
            case .activationOutcome(let configuration, let refused): activations.append((configuration, refused))
            case .captureOutcome(let refused): captures.append(refused)
            case .openStream: opens.append(nil)
            case .openStreamRefused(_, let message):
                // The session rejects the open with the engine's error right after: its code is there.
                if index + 1 < inputs.count, case .rejected(let error) = inputs[index + 1], error.message == message {
                    opens.append(error)
                } else {
                    opens.append(SessionError(code: .streamRefused, message: message))
                }
            default: break
            }
        }
        answers = Locked(Answers(activations: activations, captures: captures, opens: opens))
    }

    /// What the engine was asked that the recording did not answer.
    var surprises: [String] { answers.withLock { $0.surprises } }

    /// Answers the recording held that the replay never asked for.
    var unasked: Int { answers.withLock { $0.activations.count + $0.captures.count + $0.opens.count } }

    /// Reports `event` to the session, as the recorded engine did.
    func post(_ event: EngineEvent) {
        answers.withLock { $0.handler }?(event)
    }

    var format: AudioFormat { offline.format }
    var quantum: Int { offline.quantum }

    func setEventHandler(_ handler: @escaping @Sendable (EngineEvent) -> Void) {
        answers.withLock { $0.handler = handler }
    }

    func activate(_ configuration: SessionConfiguration) throws(SessionError) {
        let refused = answers.withLock { answers -> String? in
            guard !answers.activations.isEmpty else {
                answers.surprises.append("activation of \(configuration) that the recording has no outcome for")
                return nil
            }
            let (recorded, refused) = answers.activations.removeFirst()
            if recorded != configuration {
                answers.surprises.append("activation of \(configuration) where the recording activated \(recorded)")
            }
            return refused
        }
        if let refused { throw SessionError(code: .activationRefused, message: refused) }
        try offline.activate(configuration)
    }

    func deactivate(notifyingOthers: Bool) { offline.deactivate(notifyingOthers: notifyingOthers) }

    func openStream(
        _ id: StreamID, descriptor: StreamDescriptor, source: any AudioSource, gain: Float, paused: Bool
    ) throws(SessionError) -> any StreamControl {
        let refusal = answers.withLock { answers -> SessionError? in
            guard !answers.opens.isEmpty else {
                answers.surprises.append("open of \(descriptor.name) that the recording has no outcome for")
                return nil
            }
            return answers.opens.removeFirst()
        }
        if let refusal { throw refusal }
        return try offline.openStream(id, descriptor: descriptor, source: source, gain: gain, paused: paused)
    }

    func closeStream(_ id: StreamID) { offline.closeStream(id) }

    func setSuspended(_ suspended: Bool) { offline.setSuspended(suspended) }

    func startCapture(into ring: AudioRingBuffer) throws(SessionError) {
        let refused = answers.withLock { answers -> String? in
            guard !answers.captures.isEmpty else {
                answers.surprises.append("voice capture that the recording has no outcome for")
                return nil
            }
            return answers.captures.removeFirst()
        }
        if let refused { throw SessionError(code: .streamRefused, message: refused) }
        try offline.startCapture(into: ring)
    }

    func stopCapture() { offline.stopCapture() }
}
