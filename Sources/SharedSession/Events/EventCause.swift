/// Why an event happened.
public enum EventCause: Sendable, Hashable, CustomStringConvertible {
    /// A session lease, by id and owner.
    case sessionLease(LeaseID, owner: String)
    /// A duck or pause lease, by id and owner.
    case duckLease(LeaseID, owner: String)
    /// A call by the host (volume, play, pause, suspend, its own streams).
    case host
    /// A call by an embedded unit that holds no lease for it: a stream it opened, an unbalanced
    /// disable call through its bridge.
    case unit(owner: String)
    /// A system event.
    case system(SystemEvent)
    /// Something the engine reported.
    case engine(EngineEvent)

    public var description: String {
        switch self {
        case .sessionLease(let id, let owner): "session \(id) of \(owner)"
        case .duckLease(let id, let owner): "duck \(id) of \(owner)"
        case .host: "host"
        case .unit(let owner): "unit \(owner)"
        case .system(let event): "system \(event)"
        case .engine(let event): "engine \(event)"
        }
    }
}
