/// A session lease as the snapshot shows it: enough to find a leak by name.
public struct LeaseInfo: Sendable, Hashable, CustomStringConvertible {
    /// The lease's id.
    public let id: LeaseID
    /// Who holds it.
    public let owner: String
    /// Generic or voice.
    public let type: AudioSessionType
    /// When it was acquired.
    public let acquiredAt: ContinuousClock.Instant

    public var description: String { "\(type) \(id) of \(owner)" }
}
