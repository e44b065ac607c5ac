public import SharedSession

/// What happened to a node the session adopts (see ``NodeAdoption``), reported to the handler given to
/// ``NodeAdoption/setEventHandler(_:)``.
public enum AdoptionEvent: Sendable, Hashable, CustomStringConvertible {
    /// A node matching the rule of `stream` became a member of the session: its volume is the session's
    /// from now on. `latency` is the time from the registry announcing the node to its first volume
    /// written.
    case adopted(stream: StreamID, node: UInt32, name: String, latency: Duration)
    /// A node of `stream` went away (its player closed it, made a new one, or the daemon went away).
    /// `midRamp` says it vanished while a ramp was being written to it. The stream stays a member of the
    /// session, with its gain and its leases, and the next node matching the rule is adopted at that gain.
    case released(stream: StreamID, node: UInt32, name: String, midRamp: Bool)
    /// An adopted overlay's nodes started (`true`) or stopped (`false`) playing.
    case playing(stream: StreamID, Bool)
    /// The rule of `stream` matched no node of another client within its
    /// ``AdoptionRule/expectedWithin``. Nothing else changes: the adoption keeps waiting.
    case matchedNothing(stream: StreamID, rule: AdoptionRule, after: Duration)
    /// The rule of `stream` matches one of this engine's own nodes; it is left alone.
    case matchesOwnNode(stream: StreamID, name: String)
    /// Someone else (a user through `wpctl set-volume` or a desktop mixer) set the volume of an adopted
    /// node: it is the stream's new host volume (for the main stream, the session's `mainVolume`), kept
    /// through ducks and restores.
    case userVolume(stream: StreamID, node: UInt32, volume: Float)
    /// The session paused (`true`) or resumed the adopted main stream. Its node is faded out to silence
    /// (or faded in); the host's player keeps running until the host pauses it, which it
    /// should do on this event so the movie does not go on unheard.
    case pauseRequested(stream: StreamID, Bool)
    /// Writing the volume of `node` failed (the daemon refused it).
    case writeFailed(stream: StreamID, node: UInt32, reason: String)
    /// `node` matches the rule of `stream`, but the daemon gives this client no permission to write its
    /// volume: the host runs in a sandbox (a Flatpak app's PipeWire access is read and execute on other
    /// apps' objects). The node is left alone and plays on at its own volume. WirePlumber gives a
    /// sandboxed client write access when its `media.category` is `Manager`: make the engine with
    /// `PipeWireEngine(applicationName:remoteName:layout:access:)` and `.manager` (see the
    /// AdoptingNodes article).
    case notPermitted(stream: StreamID, node: UInt32, name: String)
    /// The watchdog that gives adopted nodes back if this process dies shares its fate (`reason`): a
    /// sandbox whose processes are all killed together (a Flatpak app's PID namespace) takes it along,
    /// and a node still ducked then stays ducked until its player closes it. Reported once, when the
    /// watchdog starts; the other endings are unaffected.
    case watchdogSharesFate(reason: String)
    /// Adopted nodes are ducked through loopbacks of the engine's own client (``AdoptionCarrier/loopback``),
    /// for `reason`: the daemon removes them with this process, however it ends, and the session manager
    /// links the nodes back to their sinks. Reported once, as the adoption starts.
    case throughLoopbacks(reason: String)
    /// The watchdog that gives adopted nodes back if this process dies could not be started (`reason`
    /// says why). Adoption works without it, and the nodes are still given back when a stream closes
    /// or the engine shuts down; a crash or SIGKILL would leave them at the session's last volume.
    case watchdogUnavailable(reason: String)

    public var description: String {
        switch self {
        case .adopted(let stream, let node, let name, let latency):
            "\(stream) adopted node \(node) (\(name)) \(latency) after it appeared"
        case .released(let stream, let node, let name, let midRamp):
            "\(stream) lost node \(node) (\(name))\(midRamp ? " in the middle of a ramp" : "")"
        case .playing(let stream, let playing): "\(stream) \(playing ? "started" : "stopped") playing"
        case .matchedNothing(let stream, let rule, let after):
            "\(stream): the rule \(rule) matched no node of another client in \(after); check the rule "
                + "(pw-dump lists the nodes and clients with their properties)"
        case .matchesOwnNode(let stream, let name):
            "\(stream): the rule matches this engine's own node \(name); it is left alone"
        case .userVolume(let stream, let node, let volume):
            "\(stream): volume \(volume) set on node \(node) from outside; it is the stream's volume now"
        case .pauseRequested(let stream, let paused): "\(stream): the session \(paused ? "paused" : "resumed") it"
        case .writeFailed(let stream, let node, let reason):
            "\(stream): writing the volume of node \(node) failed: \(reason)"
        case .notPermitted(let stream, let node, let name):
            "\(stream): node \(node) (\(name)) matches the rule, but this client may not write its volume "
                + "(a sandboxed client's read-only access); it is left alone. WirePlumber gives a sandboxed "
                + "client write access when its media.category is Manager: make the engine with access: .manager"
        case .watchdogUnavailable(let reason): reason
        case .watchdogSharesFate(let reason): reason
        case .throughLoopbacks(let reason):
            "adopted nodes are ducked through loopbacks of this client, which the daemon removes with it "
                + "however it ends: \(reason)"
        }
    }
}
