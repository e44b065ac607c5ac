/// Something the platform tells the session: what AVAudioSession's notifications and an app's
/// lifecycle callbacks carry on iOS. Pass them to ``SharedSession/handle(_:)``; engines report the
/// ones they observe themselves.
public enum SystemEvent: Sendable, Hashable {
    /// Another audio client took the device (a phone call, an alarm): rendering is suspended.
    case interruptionBegan
    /// The interruption ended; with `shouldResume` the session resumes playback.
    case interruptionEnded(shouldResume: Bool)
    /// The audio route changed.
    case routeChanged(RouteChange)
    /// The app went to the background.
    case didEnterBackground
    /// The app is coming back to the foreground.
    case willEnterForeground
    /// Another application started playing audio.
    case otherAudioStarted
    /// No other application is playing audio any more.
    case otherAudioStopped
}
