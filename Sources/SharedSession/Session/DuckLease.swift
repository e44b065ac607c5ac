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
    private let gate: ReleaseGate

    init(id: LeaseID, style: DuckStyle, owner: String, session: SharedSession) {
        self.id = id
        self.style = style
        self.owner = owner
        self.gate = ReleaseGate(
            release: { dropped in session.releaseDuck(id, owner: owner, dropped: dropped) },
            repeated: {
                session.ignoredRelease(
                    owner: owner, what: "\(style) \(id) released twice", cause: .duckLease(id, owner: owner))
            })
    }

    /// A lease for a request the session refused: already released, so releasing it does nothing
    /// but report the release as ignored.
    init(refused request: DuckRequest, session: SharedSession) {
        self.id = LeaseID(rawValue: 0)
        self.style = request.style
        self.owner = request.owner
        let owner = request.owner
        self.gate = ReleaseGate(
            released: true, release: { _ in },
            repeated: {
                session.ignoredRelease(
                    owner: owner, what: "\(request.style) refused by the unit's limits, then released",
                    cause: .unit(owner: owner))
            })
    }

    /// Whether the lease is still held.
    public var isHeld: Bool { gate.isOpen }

    /// Ends the request. Safe to call from any thread, and more than once.
    public func release() { gate.release() }

    deinit { gate.drop() }

    public var description: String { "DuckLease(\(style) \(id) of \(owner)\(isHeld ? "" : ", released"))" }
}
