/// A held duck or pause request, given by ``SharedSession/duck(owner:)`` or
/// ``SharedSession/pauseMain(owner:)``.
///
/// Ducks release in any order; the last one restores the host's current volume. The same release
/// rules as ``SessionLease`` apply.
public final class DuckLease: Sendable, CustomStringConvertible {
    /// The lease's id, as the snapshot lists it.
    public let id: LeaseID
    /// What it asks of the main stream.
    public let style: DuckStyle
    /// Who holds it.
    public let owner: String
    private let session: SharedSession
    private let gate: ReleaseGate
    /// Whether the session refused the request: the lease was released from the start.
    private let refused: Bool

    init(id: LeaseID, style: DuckStyle, owner: String, session: SharedSession) {
        self.id = id
        self.style = style
        self.owner = owner
        self.session = session
        self.gate = ReleaseGate()
        self.refused = false
    }

    /// A lease for a request the session refused: already released, so releasing it does nothing
    /// but report the release as ignored.
    init(refused request: DuckRequest, session: SharedSession) {
        self.id = LeaseID(rawValue: 0)
        self.style = request.style
        self.owner = request.owner
        self.session = session
        self.gate = ReleaseGate(released: true)
        self.refused = true
    }

    /// Whether the lease is still held.
    public var isHeld: Bool { gate.isOpen }

    /// Ends the request. Safe to call from any thread, and more than once.
    public func release() {
        if gate.close() {
            session.releaseDuck(id, owner: owner, dropped: false)
        } else if refused {
            session.ignoredRelease(
                owner: owner, what: "\(style) refused by the unit's limits, then released", cause: .unit(owner: owner))
        } else {
            session.ignoredRelease(
                owner: owner, what: "\(style) \(id) released twice", cause: .duckLease(id, owner: owner))
        }
    }

    deinit {
        if gate.close() { session.releaseDuck(id, owner: owner, dropped: true) }
    }

    public var description: String { "DuckLease(\(style) \(id) of \(owner)\(isHeld ? "" : ", released"))" }
}
