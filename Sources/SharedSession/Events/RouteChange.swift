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
