/// Where an interruption stands.
public enum InterruptionPhase: Sendable, Hashable {
    /// No interruption.
    case none
    /// An interruption is in progress: rendering is suspended.
    case interrupted
    /// An interruption ended without `shouldResume`: the main stream waits for the host's play.
    case endedWaitingForHost
}
