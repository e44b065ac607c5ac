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

    public var description: String { "\(style) \(id) of \(owner)" }
}
