/// A duck or pause lease as the snapshot shows it.
public struct DuckInfo: Sendable, Hashable, CustomStringConvertible {
    /// The lease's id.
    public let id: LeaseID
    /// Who holds it.
    public let owner: String
    /// What it asks.
    public let style: DuckStyle
    /// When it was made.
    public let acquiredAt: ContinuousClock.Instant
    /// When it is released if its holder has not released it (its own hold time or its unit's
    /// maximum hold); `nil`: no deadline.
    public let deadline: ContinuousClock.Instant?
    /// The limits of its unit that changed it, if any.
    public let appliedLimits: [UnitLimit]

    /// `package`: SharedSessionRecording reads ducks back from a recording's events.
    package init(
        id: LeaseID, owner: String, style: DuckStyle, acquiredAt: ContinuousClock.Instant,
        deadline: ContinuousClock.Instant? = nil, appliedLimits: [UnitLimit] = []
    ) {
        self.id = id
        self.owner = owner
        self.style = style
        self.acquiredAt = acquiredAt
        self.deadline = deadline
        self.appliedLimits = appliedLimits
    }

    public var description: String { "\(style) \(id) of \(owner)" }
}
