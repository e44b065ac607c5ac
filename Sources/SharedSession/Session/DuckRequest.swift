/// A unit's request to lower or pause the main stream, for ``SharedSession/duck(_:)``.
public struct DuckRequest: Sendable, Hashable {
    /// The unit asking.
    public var owner: String
    /// What it asks for.
    public var style: DuckStyle
    /// How long the request may be held at most; when it passes, the request is released as if its
    /// holder had, with a `duckExpired` event. The unit's ``UnitLimits/maximumHold`` may shorten it.
    public var maximumHold: Duration?

    /// Creates a request.
    public init(owner: String, style: DuckStyle = .duck(level: nil), maximumHold: Duration? = nil) {
        self.owner = owner
        self.style = style
        self.maximumHold = maximumHold
    }
}
