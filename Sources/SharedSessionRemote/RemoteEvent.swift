public import SharedSession

/// What a ``RemoteSession``'s event stream carries.
public enum RemoteEvent: Sendable, Hashable {
    /// An event of the host's session.
    case event(SessionEvent)
    /// The host dropped this many events because the unit did not read them: take a snapshot.
    case eventsLost(Int)
    /// The connection ended; everything the unit held is given back on the host.
    case disconnected(SessionError)
}
