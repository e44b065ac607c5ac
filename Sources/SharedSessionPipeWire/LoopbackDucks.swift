internal import CPipeWire
internal import CPipeWireShim
import Logging
import SharedSession

/// The adopted nodes' loopbacks (``AdoptionCarrier/loopback``): for each adopted node, a
/// `libpipewire-module-loopback` loaded into the engine's own context, whose sink the node is moved to
/// (its `target.object` in the "default" metadata) and whose playback stream plays on to the sink the
/// node played to, at the session's gain (the stream's soft volumes).
///
/// The loopback's two nodes belong to this process's connections, so the daemon destroys them as this
/// process's connections close, however it ends (a SIGKILL of its whole sandbox too), and the session
/// manager links the node back to its sink, at the user's volume, which was never written. Giving a
/// node back while the process runs removes its metadata key (the session manager moves it back and
/// forgets the target it saved for the move) and unloads the module a little later, once the node has
/// moved.
///
/// Loop thread (or the loop lock held) only, like ``EchoCanceller``.
final class LoopbackDucks {
    static let moduleName = "libpipewire-module-loopback"
    /// How long after a node was given back its loopback is unloaded: the session manager has moved
    /// the node back well before then (a move takes a few cycles of the graph), so it never plays to a
    /// sink that is going.
    static let unloadDelay = Duration.seconds(1)
    /// How long after a loopback went away on its own (the connection intact) it is loaded again.
    static let retryDelay = Duration.milliseconds(250)
    /// How often a node's move is tried again while the "default" metadata is missing.
    static let moveRetryInterval = Duration.milliseconds(50)

    /// One adopted node's loopback.
    struct Route {
        let name: String
        /// The module while loaded (a `CPipeWireShim_Module`).
        var module: OpaquePointer?
        /// The session's gain for the node, written to the loopback's playback stream.
        var gain: Float
        /// The loopback's sink's `object.serial`, once the registry announced it.
        var sinkSerial: String?
        /// The loopback's playback stream, bound once the registry announced it, when it was, and how
        /// many of ``AdoptionMachine/settleWrites`` were made to it.
        var output: ForeignNodeProxy?
        var outputAppeared: ContinuousClock.Instant?
        var settled = 0

        /// When the gain is next written again to the playback stream, after the session manager's restore.
        var nextSettle: ContinuousClock.Instant? {
            guard let outputAppeared, settled < AdoptionMachine.settleWrites.count else { return nil }
            return outputAppeared + AdoptionMachine.settleWrites[settled]
        }
        /// Whether the node's `target.object` names the loopback's sink, and when the write is tried
        /// again after it failed (after a daemon restart, the session manager makes the "default"
        /// metadata after the player's node may have appeared).
        var moved = false
        var moveRetryAt: ContinuousClock.Instant?
        var retryAt: ContinuousClock.Instant?
    }

    private let context: OpaquePointer
    private let remoteName: String?
    private let logger: Logger
    let nodePrefix: String
    private(set) var routes: [UInt32: Route] = [:]
    /// Loopbacks of nodes given back, unloaded at their time.
    private var leaving: [(module: OpaquePointer, at: ContinuousClock.Instant)] = []
    /// Sets (a serial) or removes (nil) a node's `target.object` in the "default" metadata; 0 or a
    /// negative errno.
    var setTarget: ((_ node: UInt32, _ serial: String?) -> Int32)?
    /// Told when a deadline was set, so the engine arms its timer for it.
    var deadlinesChanged: (() -> Void)?

    init(context: OpaquePointer, remoteName: String?, nodePrefix: String, logger: Logger) {
        self.context = context
        self.remoteName = remoteName
        self.nodePrefix = nodePrefix
        self.logger = logger
    }

    /// The loopback's sink for `node`, and its playback stream: named after the engine's prefix, so the
    /// engine never takes them for another client's audio or adopts them.
    func sinkName(of node: UInt32) -> String { "\(nodePrefix).duck.\(node)" }
    func outputName(of node: UInt32) -> String { "\(nodePrefix).duck.\(node).out" }

    /// The module's arguments (SPA JSON): a stereo sink below every other node's priority (it never
    /// becomes the default, ``NodeFactory/neverDefaultPriority``), and a playback stream linked like any
    /// stream to the default sink. It asks the session manager to restore no volume and no target on
    /// it; WirePlumber 0.4.13 does anyway (it compares the property with a boolean, so only its own rules
    /// can set it), writing the channel volumes it saved for the stream's `media.name` as the stream
    /// appears, which makes PipeWire play it at them instead of the soft volumes: the gain is written
    /// again after it (``AdoptionMachine/settleWrites``).
    func arguments(for node: UInt32, name: String) -> String {
        let label = String(name.map { $0 == "\"" || $0 == "\\" ? "'" : $0 })
        var text = """
            { audio.channels = 2 audio.position = [ FL FR ]
              node.description = "\(label) (ducked by SharedSession)"
              capture.props = { node.name = "\(sinkName(of: node))" media.class = "Audio/Sink"
                priority.session = \(NodeFactory.neverDefaultPriority) priority.driver = 0 node.virtual = true }
              playback.props = { node.name = "\(outputName(of: node))" node.virtual = true
                state.restore-props = false state.restore-target = false }
            """
        if let remoteName { text += " remote.name = \"\(remoteName)\"" }
        return text + " }"
    }

    /// The next of its deadlines, for the engine's timer.
    var nextDue: ContinuousClock.Instant? {
        let routes = routes.values
        return
            (routes.compactMap(\.retryAt) + routes.compactMap(\.moveRetryAt) + routes.compactMap(\.nextSettle)
            + leaving.map(\.at)).min()
    }

    /// Loads the loopback of `node` (its gain is the next ``write(_:gain:)``'s); the node is moved once
    /// the loopback's nodes are there and its playback stream has the gain. Returns 0 or a negative errno (the module missing: Debian's
    /// libpipewire-0.3-modules).
    func route(_ node: UInt32, name: String) -> Int32 {
        if let old = routes.removeValue(forKey: node) { drop(old) }
        var route = Route(name: name, gain: 1)
        let result = load(node, into: &route)
        routes[node] = route
        return result
    }

    /// The session's gain for `node`: written to its loopback's playback stream. 0 or a negative errno.
    func write(_ node: UInt32, gain: Float) -> Int32 {
        guard routes[node] != nil else { return -Int32(ENOENT) }
        routes[node]?.gain = gain
        return routes[node]?.output?.write(soft: gain) ?? 0
    }

    /// Gives `node` back: its `target.object` is removed (the session manager moves it back to its
    /// sink), and the loopback unloaded ``unloadDelay`` later.
    func unroute(_ node: UInt32, at now: ContinuousClock.Instant) {
        guard let route = routes.removeValue(forKey: node) else { return }
        if route.moved, let result = setTarget?(node, nil), result < 0 {
            logger.warning("removing the target of node \(node) failed (\(result)); unloading its loopback moves it")
        }
        route.output?.destroy()
        if let module = route.module {
            leaving.append((module, now + Self.unloadDelay))
            deadlinesChanged?()
        }
    }

    /// `node` went away: its loopback goes at once (the daemon removes a gone node's metadata itself).
    func forget(_ node: UInt32) {
        if let route = routes.removeValue(forKey: node) { drop(route) }
        for (player, route) in routes where route.output?.id == node {
            routes[player]?.output?.destroy()
            routes[player]?.output = nil
        }
    }

    /// A global appeared: a loopback's sink is where its node is moved to; its playback stream is bound
    /// and given the gain.
    func globalAdded(id: UInt32, properties: [String: String], registry: OpaquePointer) {
        guard let name = properties["node.name"], name.hasPrefix(nodePrefix + ".duck.") else { return }
        for (node, route) in routes {
            if name == sinkName(of: node) {
                routes[node]?.sinkSerial = properties["object.serial"] ?? "\(id)"
            } else if name == outputName(of: node), route.output == nil {
                let output = ForeignNodeProxy(registry: registry, id: id, observer: self)
                _ = output?.write(soft: route.gain)
                routes[node]?.output = output
                routes[node]?.outputAppeared = .now
                routes[node]?.settled = 0
                deadlinesChanged?()
            } else {
                continue
            }
            moveIfReady(node, at: .now)
        }
    }

    /// Runs what is due: loopbacks of nodes given back are unloaded, those that went away loaded again.
    func housekeeping(at now: ContinuousClock.Instant) {
        while let index = leaving.firstIndex(where: { $0.at <= now }) {
            CPipeWireShim_moduleUnload(leaving.remove(at: index).module)
        }
        for node in routes.keys.sorted() {
            guard var route = routes[node], let retryAt = route.retryAt, retryAt <= now else { continue }
            route.retryAt = nil
            let result = load(node, into: &route)
            routes[node] = route
            if result < 0 { logger.error("loading the loopback of node \(node) again failed (\(result))") }
        }
        for node in routes.keys.sorted() {
            guard let due = routes[node]?.nextSettle, due <= now else { continue }
            routes[node]?.settled += 1
            if let route = routes[node] { _ = route.output?.write(soft: route.gain) }
        }
        for node in routes.keys.sorted() {
            guard let retry = routes[node]?.moveRetryAt, retry <= now else { continue }
            routes[node]?.moveRetryAt = nil
            moveIfReady(node, at: now)
        }
    }

    /// The connection is going away: every loopback is unloaded before it (the nodes go with it).
    func disconnected() {
        for route in routes.values { drop(route) }
        routes.removeAll()
        for entry in leaving { CPipeWireShim_moduleUnload(entry.module) }
        leaving.removeAll()
    }

    // MARK: Private

    private func load(_ node: UInt32, into route: inout Route) -> Int32 {
        if let old = route.module { CPipeWireShim_moduleUnload(old) }
        route.module = nil
        let data = Unmanaged.passUnretained(self).toOpaque()
        guard
            let module = CPipeWireShim_moduleLoad(
                context, Self.moduleName, arguments(for: node, name: route.name),
                { data in
                    guard let data else { return }
                    Unmanaged<LoopbackDucks>.fromOpaque(data).takeUnretainedValue().wentAway()
                }, data)
        else {
            let result = -errno
            logger.error(
                "cannot load \(Self.moduleName) for node \(node) (\(result)): it plays on at its own sink, not ducked")
            return result
        }
        route.module = module
        route.output?.destroy()
        route.output = nil
        route.outputAppeared = nil
        route.sinkSerial = nil
        route.moved = false
        return 0
    }

    /// A loopback destroyed itself (its connection broke, or its stream was disconnected): its node is
    /// moved back by the session manager as the sink goes, and the loopback is loaded again
    /// ``retryDelay`` later (freed there: this runs inside the module's destroy event).
    private func wentAway() {
        let now = ContinuousClock.now
        for (node, route) in routes where route.module.map({ !CPipeWireShim_moduleIsAlive($0) }) ?? false {
            logger.warning("the loopback of node \(node) went away; loading it again in \(Self.retryDelay)")
            routes[node]?.retryAt = now + Self.retryDelay
            routes[node]?.moved = false
        }
        deadlinesChanged?()
    }

    /// Moves `node` to its loopback once the loopback's sink is known and its playback stream has the
    /// gain (so the node is never heard through it at another gain); tried again every
    /// ``moveRetryInterval`` while the "default" metadata is missing.
    private func moveIfReady(_ node: UInt32, at now: ContinuousClock.Instant) {
        guard let route = routes[node], !route.moved, let serial = route.sinkSerial, route.output != nil else { return }
        let result = setTarget?(node, serial) ?? -Int32(ENOTCONN)
        if result < 0 {
            if result != -Int32(ENOENT) { logger.error("moving node \(node) to its loopback failed (\(result))") }
            logger.debug("moving node \(node) to its loopback: \(result); trying again")
            routes[node]?.moveRetryAt = now + Self.moveRetryInterval
            deadlinesChanged?()
            return
        }
        routes[node]?.moved = true
        logger.info("node \(node) moved to its loopback \(sinkName(of: node)) (serial \(serial))")
    }

    private func drop(_ route: Route) {
        route.output?.destroy()
        if let module = route.module { CPipeWireShim_moduleUnload(module) }
    }
}

/// The playback stream's `Props`: a write of its channel volumes by anyone (a mixer) makes PipeWire play
/// it at them instead of the soft volumes, so the gain is written again.
extension LoopbackDucks: ForeignProxyObserver {
    func foreignNode(_ id: UInt32, info properties: [String: String]?, running: Bool) {}

    func foreignNode(_ id: UInt32, volumes: [Float], soft: Float?, mute: Bool) {
        guard let (node, route) = routes.first(where: { $0.value.output?.id == id }) else { return }
        if let soft, abs(soft - route.gain) <= AdoptionMachine.userVolumeTolerance { return }
        _ = routes[node]?.output?.write(soft: route.gain)
    }

    func foreignClient(_ id: UInt32, info properties: [String: String]) {}
}

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif
