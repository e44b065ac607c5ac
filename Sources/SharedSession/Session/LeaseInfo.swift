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

    /// `package`: SharedSessionRecording reads leases back from a recording's events.
    package init(id: LeaseID, owner: String, type: AudioSessionType, acquiredAt: ContinuousClock.Instant) {
        self.id = id
        self.owner = owner
        self.type = type
        self.acquiredAt = acquiredAt
    }

    public var description: String { "\(type) \(id) of \(owner)" }
}
