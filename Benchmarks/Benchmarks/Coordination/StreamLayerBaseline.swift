import Synchronization

/// The baseline: a straight port of the StreamLayer sample's host-side logic (its SLROverlayDelegate
/// example) to Swift on Linux. One lock, two session counters, and a stack of pre-duck volumes;
/// no accounting, no events, no engine. The player is reduced to the volume it would be given.
final class StreamLayerBaseline: Sendable {
    private struct State {
        var genericSessions = 0
        var voiceSessions = 0
        var playerVolumeOriginal: [Float] = []
        var streamVolume: Float = 1
        var playerVolume: Float = 1
        var sessionActive = false
    }

    enum SessionType { case generic, voice }

    private let volumeReduceRate: Float = 0.1
    private let state = Mutex(State())

    func prepareAudioSession(for type: SessionType) {
        state.withLock { state in
            switch type {
            case .voice: state.voiceSessions += 1
            case .generic: state.genericSessions += 1
            }
            if state.genericSessions > 0, state.voiceSessions == 0 || type == .voice {
                state.sessionActive = true
            }
        }
    }

    func disableAudioSession(for type: SessionType) {
        state.withLock { state in
            switch type {
            case .voice: state.voiceSessions -= 1
            case .generic: state.genericSessions -= 1
            }
            if state.genericSessions + state.voiceSessions == 0 {
                state.sessionActive = false
            }
        }
    }

    func requestAudioDucking() {
        state.withLock { state in
            let isDuckingActive =
                state.playerVolumeOriginal.last.map { state.streamVolume == volumeReduceRate * $0 } ?? false
            state.playerVolumeOriginal.append(state.streamVolume)
            if !isDuckingActive {
                state.streamVolume = volumeReduceRate * state.streamVolume
            }
            state.playerVolume = state.streamVolume
        }
    }

    func disableAudioDucking() {
        state.withLock { state in
            if !state.playerVolumeOriginal.isEmpty {
                state.streamVolume = state.playerVolumeOriginal.popLast() ?? 1
                state.playerVolume = state.streamVolume
            }
        }
    }

    var playerVolume: Float { state.withLock { $0.playerVolume } }
}
