/// Where the session's gain reaches a node adopted from another player (see ``NodeAdoption``), given to
/// ``PipeWireEngine/init(applicationName:remoteName:layout:access:adoptionCarrier:logger:)``. The two
/// differ in what is left when every process of the host dies at once; the AdoptingNodes article has
/// the figures.
public enum AdoptionCarrier: Sendable, Hashable, CustomStringConvertible {
    /// ``loopback`` when this process's watchdog would die with it (a sandbox with a PID namespace of
    /// its own, as Flatpak runs every app; a container), ``softVolumes`` otherwise. The default.
    case automatic
    /// The node's own `Props` `softVolumes`: the node stays linked as it was, with no added latency
    /// and no gap. A watchdog process gives the node back if this process dies without doing so; one
    /// that dies with this process (a sandbox killed whole) leaves the node ducked.
    case softVolumes
    /// A loopback of the engine's own client (`libpipewire-module-loopback`) that the node is moved to
    /// (its `target.object` in the "default" metadata), played on at the session's gain. The daemon
    /// removes the loopback when this process's connections close, however every process of the host
    /// ends, and the session manager links the node back to its sink at the user's volume. Each move
    /// costs a gap of silence on PipeWire 1.4 and none on 0.3.65 (the AdoptingNodes article has the gap
    /// per player).
    case loopback

    /// Whether nodes are ducked through loopbacks, for a process whose watchdog shares its fate or not.
    package func throughLoopbacks(watchdogSharesFate: Bool) -> Bool {
        switch self {
        case .automatic: watchdogSharesFate
        case .softVolumes: false
        case .loopback: true
        }
    }

    public var description: String {
        switch self {
        case .automatic: "automatic"
        case .softVolumes: "soft volumes"
        case .loopback: "loopback"
        }
    }
}
