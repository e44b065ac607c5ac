/// A held duck or pause request, given by ``SharedSession/duck(owner:)`` or
/// ``SharedSession/pauseMain(owner:)``.
///
/// Ducks release in any order; the last one restores the host's current volume. The same release
/// rules as ``SessionLease`` apply.
public final class DuckLease: Sendable, CustomStringConvertible {
    /// The lease's id, as the snapshot lists it: `nil` if the session refused the request
    /// (``SharedSession/duck(owner:)`` and ``SharedSession/pauseMain(owner:)`` give such a lease,
    /// released from the start).
    public let id: LeaseID?
    /// What it asks of the main stream.
    public let style: DuckStyle
    /// Who holds it.
    public let owner: String
    private let session: SharedSession
    private let gate: ReleaseGate

    init(id: LeaseID, style: DuckStyle, owner: String, session: SharedSession) {
        self.id = id
        self.style = style
        self.owner = owner
        self.session = session
        self.gate = ReleaseGate()
    }

    /// A lease for a request the session refused: it has no id, and is already released, so
    /// releasing it does nothing but report the release as ignored.
    init(refused request: DuckRequest, session: SharedSession) {
        self.id = nil
        self.style = request.style
        self.owner = request.owner
        self.session = session
        self.gate = ReleaseGate(released: true)
    }

    /// Whether the lease is still held.
    public var isHeld: Bool { gate.isOpen }

    /// Ends the request. Safe to call from any thread, and more than once.
    public func release() {
        guard let id else {
            session.ignoredRelease(
                owner: owner, what: "\(style) refused by the unit's limits, then released", cause: .unit(owner: owner))
            return
        }
        if gate.close() {
            session.releaseDuck(id, owner: owner, dropped: false)
        } else {
            session.ignoredRelease(
                owner: owner, what: "\(style) \(id) released twice", cause: .duckLease(id, owner: owner))
        }
    }

    deinit {
        if let id, gate.close() { session.releaseDuck(id, owner: owner, dropped: true) }
    }

    public var description: String {
        guard let id else { return "DuckLease(\(style) of \(owner), refused)" }
        return "DuckLease(\(style) \(id) of \(owner)\(isHeld ? "" : ", released"))"
    }
}
