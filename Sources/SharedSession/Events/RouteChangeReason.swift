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
