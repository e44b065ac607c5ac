import SharedSession

/// What one unit's connection holds on the session, and the session calls its requests make under the
/// connection's owner name. It lives on the connection's `ConnectionExecutor`, off the event loop: a
/// session call may wait for the engine.
struct UnitBook: Sendable {
    /// What the connection on the event loop does with a request's result.
    enum Outcome: Sendable {
        /// Write the reply.
        case reply(id: Int, Reply)
        /// Answer a line the host did not take: to its request `id` if there is one and the connection
        /// stays, else with an error line; `closing` closes the connection after it.
        case fail(SessionError, reply: Int?, closing: Bool)
        /// The unit left: reply, and close.
        case left(id: Int)
        /// Nothing: the request came after the connection was given up.
        case nothing
    }

    private enum Held {
        case session(SessionLease)
        case duck(DuckLease)
    }

    private enum Phase {
        case open
        /// The unit acted under another name: its connection is closing, and nothing more it asked is
        /// taken.
        case refusing
        /// Everything was given back.
        case released
    }

    private let server: ServerContext
    private let connection: Int
    private let owner: String
    private var phase = Phase.open
    private var held: [LeaseID: Held] = [:]

    init(server: ServerContext, connection: Int, owner: String) {
        self.server = server
        self.connection = connection
        self.owner = owner
    }

    /// Takes the request `id` and says what to answer.
    mutating func perform(_ request: UnitRequest, id: Int) -> Outcome {
        guard case .open = phase else { return .nothing }
        switch request {
        case .snapshot:
            return .reply(id: id, .snapshot(server.session.snapshot))
        case .leave:
            releaseEverything(reason: "it left")
            return .left(id: id)
        default:
            do throws(SessionError) {
                return .reply(id: id, try apply(request))
            } catch {
                guard error.code == .accessRefused else { return .reply(id: id, .failed(error)) }
                // Acting under another name: nothing the connection says can be trusted.
                phase = .refusing
                return .fail(error, reply: nil, closing: true)
            }
        }
    }

    /// Releases everything the connection holds, once, and tells the session which unit went and why.
    mutating func releaseEverything(reason: String) {
        guard phase != .released else { return }
        phase = .released
        let leases = held.values
        held = [:]
        var sessions = 0
        var ducks = 0
        // Ducks first: the main stream starts its restore before any configuration change.
        for case .duck(let lease) in leases {
            lease.release()
            ducks += 1
        }
        for case .session(let lease) in leases {
            lease.release()
            sessions += 1
        }
        // The name is free before the session says the unit went: a unit that reconnects once it
        // sees `unitReleased` is never told its name is still taken.
        server.registry.remove(
            connection: connection, owner: owner,
            summary: "\(sessions) session(s) and \(ducks) duck(s) given back: \(reason)")
        server.session.unitReleased(owner: owner, reason: reason, sessions: sessions, ducks: ducks)
    }

    private mutating func apply(_ request: UnitRequest) throws(SessionError) -> Reply {
        let session = server.session
        switch request {
        case .acquire(let type, let asked):
            try check(asked)
            try checkRoom()
            let lease = try session.acquire(type, owner: owner)
            held[lease.id] = .session(lease)
            return .granted(lease.id, type: lease.type)
        case .duck(let request):
            try check(request.owner)
            try checkRoom()
            let lease = try session.duck(request)
            // `duck(_:)` throws when it refuses, so the lease has its id; were it refused all the same,
            // the unit hears a refusal, never a lease it cannot release.
            guard let id = lease.id else {
                throw SessionError(code: .limitExceeded, message: "the session refused the duck of \(request.owner)")
            }
            held[id] = .duck(lease)
            return .granted(id, type: nil)
        case .releaseLease(let id, _):
            if case .session(let lease) = held[id] {
                held[id] = nil
                lease.release()
                return .done
            }
            return try releaseNotHeld(id, what: "releaseLease")
        case .releaseDuck(let id, _):
            if case .duck(let lease) = held[id] {
                held[id] = nil
                lease.release()
                return .done
            }
            return try releaseNotHeld(id, what: "releaseDuck")
        case .ignoredRelease(let asked, let what):
            try check(asked)
            session.ignoredRelease(owner: owner, what: what, cause: .unit(owner: owner))
            return .done
        case .snapshot, .leave:
            preconditionFailure("\(request) is not a session call")
        }
    }

    private func check(_ asked: String) throws(SessionError) {
        guard asked == owner else {
            throw SessionError(
                code: .accessRefused,
                message:
                    "the connection of \"\(owner)\" asked to act as \"\(asked.prefix(80))\": a unit acts under the "
                    + "name the host gave it; the connection is closed")
        }
    }

    private func checkRoom() throws(SessionError) {
        let limit = server.limits.leasesPerUnit
        guard held.count < limit else {
            throw SessionError(
                code: .limitExceeded,
                message: "the unit holds \(limit) leases, the host's limit for a connection: release some first")
        }
    }

    /// A release of a lease this connection does not hold: someone else's is refused; one that is
    /// gone (released twice, expired, or from an earlier connection) is an ignored release.
    private func releaseNotHeld(_ id: LeaseID, what: String) throws(SessionError) -> Reply {
        let snapshot = server.session.snapshot
        if snapshot.leases.contains(where: { $0.id == id }) || snapshot.ducks.contains(where: { $0.id == id }) {
            throw RemoteProtocol.violation(
                "\(what)(\(id)): lease \(id) is not this unit's; a unit releases only leases it was granted")
        }
        server.session.ignoredRelease(
            owner: owner, what: "\(what)(\(id)) of a lease it does not hold (released already)",
            cause: .unit(owner: owner))
        return .done
    }
}
