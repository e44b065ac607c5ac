public import SharedSession
import Synchronization

/// A session, duck or pause lease a unit holds on a remote host: given by ``RemoteSession/acquire(_:)``
/// or ``RemoteSession/duck(_:maximumHold:)``.
///
/// The same rules as in-process leases: releasing twice does nothing more (the host records an
/// ignored release), and a lease let go of without ``release()`` is released when it is deallocated.
/// If the connection closes first, the host has already given it back.
public final class RemoteLease: Sendable, CustomStringConvertible {
    /// What a lease holds.
    public enum Kind: Sendable, Hashable {
        /// A session of this type (the type the host granted).
        case session(AudioSessionType)
        /// A duck or pause request of this style.
        case duck(DuckStyle)
    }

    /// The id the host's session gave it, as its snapshot lists it.
    public let id: LeaseID
    /// What it holds.
    public let kind: Kind
    private let session: RemoteSession
    private let released = Atomic<Bool>(false)

    init(id: LeaseID, kind: Kind, session: RemoteSession) {
        self.id = id
        self.kind = kind
        self.session = session
    }

    /// The owner name the lease carries on the host.
    public var owner: String { session.owner }

    /// Whether ``release()`` has not been called yet (the host may have given it back already, if the
    /// connection closed or a deadline expired it).
    public var isHeld: Bool { !released.load(ordering: .acquiring) }

    /// Releases the lease on the host and waits until the host has applied it.
    ///
    /// - Throws: `SessionError` with code `connectionLost` if the connection is gone (the host gave
    ///   the lease back when it closed), or `invalidValue` on a NIO event loop thread, where nothing
    ///   may wait (the lease stays held: use the async form there).
    public func release() throws(SessionError) {
        try RemoteSession.refuseToWaitOnEventLoop()
        // A second release goes to the host too, which records it as ignored, as in-process.
        released.store(true, ordering: .releasing)
        _ = try session.call(releaseRequest(dropped: false))
    }

    /// Releases the lease on the host and suspends until the host has applied it.
    ///
    /// - Throws: `SessionError` with code `connectionLost` if the connection is gone.
    public func release() async throws(SessionError) {
        released.store(true, ordering: .releasing)
        _ = try await session.call(releaseRequest(dropped: false))
    }

    /// Releases the lease without waiting for the host: the delegate's disable calls on an event loop.
    func releaseWithoutWaiting() {
        released.store(true, ordering: .releasing)
        session.post(releaseRequest(dropped: false))
    }

    private func releaseRequest(dropped: Bool) -> UnitRequest {
        switch kind {
        case .session: .releaseLease(id, dropped: dropped)
        case .duck: .releaseDuck(id, dropped: dropped)
        }
    }

    deinit {
        if !released.load(ordering: .acquiring), session.isConnected {
            session.post(releaseRequest(dropped: true))
        }
    }

    public var description: String { "RemoteLease(\(kind) \(id) of \(owner)\(isHeld ? "" : ", released"))" }
}
