/// What the host and the platform say about playback: the host's volume and play button, the
/// interruption, the app in the background, a suspension by hand, other apps' audio, the route, and
/// what the engine reported of its connection and quantum.
struct PlaybackContext: Sendable {
    /// Where an interruption stands, as a stored phase.
    enum Interruption: Sendable, Hashable {
        case none
        /// An interruption is in progress; `thenWaitForHost` if an earlier one ended without
        /// `shouldResume` and the host has not pressed play since: its end will not resume then either.
        case interrupted(thenWaitForHost: Bool)
        /// An interruption ended without `shouldResume` and the host has not pressed play since. A
        /// later interruption that ends with `shouldResume` does not lift it: only the host's play does.
        case waitingForHost
    }

    struct ManualSuspension: Sendable, Hashable {
        var renderAnyway: Bool
    }

    var hostVolume: Float = 1
    var hostWantsPlay = true
    private(set) var interruption = Interruption.none
    private(set) var inBackground = false
    /// A manual `suspend(renderAnyway:)`: `nil` when not suspended by hand.
    var manualSuspension: ManualSuspension?
    private(set) var otherAudioPlaying = false
    private(set) var currentRoute: String?
    var engineConnected = true
    var quantum = 0
    /// The main stream's loudness duck, as the engine last reported it.
    var mainLoudnessDuck: LoudnessDuckReading?

    var isInterrupted: Bool {
        if case .interrupted = interruption { return true }
        return false
    }

    var waitsForHost: Bool {
        switch interruption {
        case .none: false
        case .interrupted(let thenWaitForHost): thenWaitForHost
        case .waitingForHost: true
        }
    }

    /// The public phase: an interruption in progress, or one that ended and waits for the host.
    var phase: InterruptionPhase {
        switch interruption {
        case .none: .none
        case .interrupted: .interrupted
        case .waitingForHost: .endedWaitingForHost
        }
    }

    /// Suspended by hand with `renderAnyway`: sources keep running, output is muted.
    var isMutedByHand: Bool { manualSuspension?.renderAnyway == true }

    /// The host pressed play: an interruption in progress or waiting for the host is over.
    mutating func play(_ log: inout EffectLog) {
        hostWantsPlay = true
        if interruption != .none {
            interruption = .none
            log.emit(.interruptionEnded(shouldResume: true), .host)
        }
    }

    /// Applies a platform event with its event. Returns `false`, changing nothing, for one that does
    /// not apply (an interruption end without a beginning, a second background).
    mutating func handle(_ event: SystemEvent, _ log: inout EffectLog) -> Bool {
        let cause = EventCause.system(event)
        switch event {
        case .interruptionBegan:
            interruption = .interrupted(thenWaitForHost: waitsForHost)
            log.emit(.interruptionBegan, cause)
        case .interruptionEnded(let shouldResume):
            guard case .interrupted(let thenWaitForHost) = interruption else { return false }
            interruption = thenWaitForHost || !shouldResume ? .waitingForHost : .none
            log.emit(.interruptionEnded(shouldResume: shouldResume), cause)
        case .routeChanged(let route):
            if let output = route.currentOutput { currentRoute = output }
            if route.reason == .oldDeviceUnavailable { hostWantsPlay = false }
            log.emit(.routeChanged(route), cause)
        case .didEnterBackground:
            guard !inBackground else { return false }
            inBackground = true
            log.emit(.backgroundChanged(isInBackground: true), cause)
        case .willEnterForeground:
            guard inBackground || isInterrupted else { return false }
            if inBackground {
                inBackground = false
                log.emit(.backgroundChanged(isInBackground: false), cause)
            }
            // An interruption whose end never came is lifted when the app comes back.
            if case .interrupted(let thenWaitForHost) = interruption {
                interruption = thenWaitForHost ? .waitingForHost : .none
                log.emit(.interruptionEnded(shouldResume: true), cause)
            }
        case .otherAudioStarted, .otherAudioStopped:
            let playing = event == .otherAudioStarted
            guard playing != otherAudioPlaying else { return false }
            otherAudioPlaying = playing
            log.emit(.otherAudioChanged(isPlaying: playing), cause)
        }
        return true
    }
}
