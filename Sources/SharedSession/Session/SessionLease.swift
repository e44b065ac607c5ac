import Synchronization

/// A held session of one type, given by ``SharedSession/acquire(_:owner:)``.
///
/// Give it back with ``release()``. A second release does nothing but log a warning and send a
/// `releaseIgnored` event: it never takes anyone else's share. A lease dropped without release (its
/// owner went away) is released when it is deinitialised, with a `leaseDropped` event naming the owner.
public final class SessionLease: Sendable, CustomStringConvertible {
    /// The lease's id, as the snapshot lists it.
    public let id: LeaseID
    /// Generic or voice.
    public let type: AudioSessionType
    /// Who holds it.
    public let owner: String
    private let session: SharedSession
    private let gate = ReleaseGate()

    init(id: LeaseID, type: AudioSessionType, owner: String, session: SharedSession) {
        self.id = id
        self.type = type
        self.owner = owner
        self.session = session
    }

    /// Whether the lease is still held.
    public var isHeld: Bool { gate.isOpen }

    /// Gives the session back. Safe to call from any thread, and more than once.
    public func release() {
        if gate.close() {
            session.releaseLease(id, owner: owner, dropped: false)
        } else {
            session.ignoredRelease(
                owner: owner, what: "\(type) \(id) released twice", cause: .sessionLease(id, owner: owner))
        }
    }

    deinit {
        if gate.close() { session.releaseLease(id, owner: owner, dropped: true) }
    }

    public var description: String { "SessionLease(\(type) \(id) of \(owner)\(isHeld ? "" : ", released"))" }
}
