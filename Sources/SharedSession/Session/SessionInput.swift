/// Everything that reaches a session, as a recording keeps it: every call with its owner, every
/// platform and engine event, and the outcome of every engine call the session made, each a
/// ``SessionRequest`` with the id the session handed out for it (a lease's, a stream's). Replayed in
/// order against a fresh session, these reproduce its events exactly.
public struct SessionInput: Sendable, Hashable {
    /// What was asked.
    public var request: SessionRequest
    /// What the session handed out for it: the lease an acquire or an admitted duck made, the id an
    /// opened stream was given; `nil` for every other request, and for a duck the session refused
    /// (the unit's limits, a followed stream not open), which made no lease.
    public var handedOut: HandedOut?

    /// An id the session gave a request.
    public enum HandedOut: Sendable, Hashable {
        /// The lease an acquire or a duck made.
        case lease(LeaseID)
        /// The id an opened stream was given.
        case stream(StreamID)
    }

    /// `request`, with what the session handed out for it.
    public init(_ request: SessionRequest, handedOut: HandedOut? = nil) {
        self.request = request
        self.handedOut = handedOut
    }

    /// The lease the request made, if it made one.
    public var lease: LeaseID? {
        if case .lease(let id)? = handedOut { id } else { nil }
    }

    /// The id the opened stream was given, if the request opened one.
    public var stream: StreamID? {
        if case .stream(let id)? = handedOut { id } else { nil }
    }
}

extension SessionInput: CustomStringConvertible {
    /// The request, followed by what was handed out for it: `acquire(generic, owner: "feed") → lease#1`.
    public var description: String {
        switch handedOut {
        case .lease(let id)?: "\(request) → \(id)"
        case .stream(let id)?: "\(request) → \(id)"
        case nil: "\(request)"
        }
    }
}

/// Receives every ``SessionInput`` that reaches a session, in order, with the time it arrived: what a
/// recorder of the session attaches with ``SharedSession/addInputObserver(_:)``.
///
/// ## Implementation requirements
/// Called with the session's lane lock held, on the thread that made the call: return at once (append
/// to a buffer), and never call back into the session.
public protocol SessionInputObserver: AnyObject, Sendable {
    /// One input, at `time`.
    func session(_ session: SharedSession, received input: SessionInput, at time: ContinuousClock.Instant)

    /// One event the session emitted, at `time`: told right after the input that caused it, before
    /// the event reaches ``SharedSession/events`` and the delegate. Does nothing unless implemented.
    func session(_ session: SharedSession, emitted event: SessionEvent, at time: ContinuousClock.Instant)
}

extension SessionInputObserver {
    /// Ignores the event: an observer that only wants the inputs need not implement it.
    public func session(_ session: SharedSession, emitted event: SessionEvent, at time: ContinuousClock.Instant) {}
}
