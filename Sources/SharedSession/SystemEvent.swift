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

/// Why the route changed, in AVAudioSession's terms. A struct with static members, since the set
/// grows.
public struct RouteChangeReason: Hashable, Sendable, CustomStringConvertible {
    /// The reason's name.
    public let name: String

    /// Creates a reason.
    public init(_ name: String) { self.name = name }

    /// A new output became available (headphones plugged in, a sink added).
    public static let newDeviceAvailable = RouteChangeReason("newDeviceAvailable")
    /// The output in use went away (headphones unplugged): the main stream pauses.
    public static let oldDeviceUnavailable = RouteChangeReason("oldDeviceUnavailable")
    /// The session's category changed.
    public static let categoryChange = RouteChangeReason("categoryChange")
    /// The route was overridden (to the speaker, by the user or the app).
    public static let override = RouteChangeReason("override")
    /// The default output was changed by the system or the user.
    public static let routeConfigurationChange = RouteChangeReason("routeConfigurationChange")
    /// No route can carry the session's category.
    public static let noSuitableRoute = RouteChangeReason("noSuitableRoute")

    public var description: String { name }
}

/// A change of audio route.
public struct RouteChange: Hashable, Sendable {
    /// Why it changed.
    public var reason: RouteChangeReason
    /// The output used before, if known.
    public var previousOutput: String?
    /// The output used now, if known.
    public var currentOutput: String?

    /// Describes a route change.
    public init(reason: RouteChangeReason, previousOutput: String? = nil, currentOutput: String? = nil) {
        self.reason = reason
        self.previousOutput = previousOutput
        self.currentOutput = currentOutput
    }
}
