internal import CPipeWire
internal import CPipeWireShim
import Logging
import SharedSession

/// The engine's state on the PipeWire loop: the connection, the streams, the watchers and the
/// reconnection. Reached only through ``ThreadLoop/withLock(_:)`` or from PipeWire callbacks, which
/// hold the loop lock; never from the data thread.
final class EngineCore {
    /// A stream the session opened. It outlives connections: on reconnect a new `pw_stream` is
    /// made for it, and its renderer still holds the gain and pause state the session set.
    struct OpenStream {
        let descriptor: StreamDescriptor
        let renderer: StreamRenderer
        var node: PipeWireStream?
    }

    private let loop: UnsafeMutablePointer<pw_loop>
    private let context: OpaquePointer
    let shared: RealtimeShared
    let delivery: EventDelivery
    let logger: Logger
    let format: AudioFormat
    /// Prefix of every node name of this engine, so its own streams are never "other audio".
    let nodePrefix: String
    let applicationName: String
    /// Which streams get a node of their own and which play through ``bus``.
    let layout: StreamLayout
    /// The overlay bus of the mixed layout (unused, without a node, in the per-stream layout).
    let bus: OverlayBus
    /// The daemon's socket name (`remote.name`); nil: PipeWire's default (PIPEWIRE_REMOTE or pipewire-0).
    private let remoteName: String?

    private(set) var core: OpaquePointer?
    private let coreHook: UnsafeMutablePointer<spa_hook>
    private let coreEvents: UnsafeMutablePointer<pw_core_events>
    private var watcher: RegistryWatcher?
    private var tick: UnsafeMutablePointer<spa_source>?

    private(set) var streams: [StreamID: OpenStream] = [:]
    /// Nodes of closed streams fading out over their renderer's de-click time: destroyed by the
    /// housekeeping tick once the renderer is silent, or at the deadline whatever happens.
    private var closing: [(node: PipeWireStream, renderer: StreamRenderer, deadline: ContinuousClock.Instant)] = []
    /// The longest a closed stream's node is kept for its fade: a few quanta of the largest size.
    static let closingLimit = Duration.milliseconds(300)
    private var capture: (ring: AudioRingBuffer, node: PipeWireStream?)?
    private var monitor: (ring: AudioRingBuffer, target: String?, node: PipeWireStream?)?

    // Connection state.
    private var reconnect = ReconnectPolicy()
    /// Set when the connection broke, until the housekeeping tick has torn it down.
    private var brokenReason: String?
    /// The sequence number of the sync sent after connecting; its `done` means the registry has
    /// announced every object that existed then (every sink a stream may name as its target).
    private var registrySync: Int32 = -1
    /// Whether the registry's first enumeration since the last connection is complete.
    private(set) var isRegistrySynced = false
    private var reportedQuantum = 0
    private var graph: GraphTracker

    /// The housekeeping tick while something is in motion: a reconnection, or streams starting
    /// (until ``busyWindow`` after the last connection or opened stream, past the STREAMING deadline).
    static let tickInterval = Duration.milliseconds(20)
    /// The tick in steady playback. Each tick wakes the loop thread: at 20 ms that was half of what
    /// one engine cost beyond a plain libpipewire client playing the same stream (Benchmarks/run).
    /// What the tick still watches for then, a quantum change, is reported within this.
    static let idleTickInterval = Duration.milliseconds(250)
    static let busyWindow = Duration.seconds(4)
    private var busyUntil = ContinuousClock.now
    private var tickIsFast = true

    init(
        loop: UnsafeMutablePointer<pw_loop>, context: OpaquePointer, applicationName: String, remoteName: String?,
        nodePrefix: String, layout: StreamLayout = .perStream, format: AudioFormat, shared: RealtimeShared,
        delivery: EventDelivery, logger: Logger
    ) {
        self.layout = layout
        self.bus = OverlayBus(format: format)
        self.loop = loop
        self.context = context
        self.applicationName = applicationName
        self.remoteName = remoteName
        self.nodePrefix = nodePrefix
        self.graph = GraphTracker(ownPrefix: nodePrefix)
        self.format = format
        self.shared = shared
        self.delivery = delivery
        self.logger = logger
        coreHook = .allocate(capacity: 1)
        coreHook.initialize(to: spa_hook())
        coreEvents = .allocate(capacity: 1)
        coreEvents.initialize(to: pw_core_events())
        Self.fillEvents(coreEvents)
    }

    deinit {
        coreHook.deallocate()
        coreEvents.deallocate()
    }

    var isConnected: Bool { core != nil && brokenReason == nil }

    /// The default sink the streams follow, as the daemon's metadata says.
    var defaultSink: String? { graph.defaultSink }

    /// Set by ``shutdown()``: the context is gone and nothing may be opened any more.
    private(set) var isShutDown = false

    private func checkNotShutDown(_ what: String) throws(SessionError) {
        guard !isShutDown else {
            throw SessionError(
                code: .engineUnavailable, message: "cannot \(what): the PipeWire engine was shut down; make a new one")
        }
    }

    // MARK: Connection

    /// Connects for the first time and starts the housekeeping timer.
    func start() throws(SessionError) {
        let result = connect()
        guard result >= 0 else {
            throw .pipeWire(
                .engineUnavailable, "no PipeWire daemon could be reached", result: result,
                fix: SessionError.startDaemonAdvice)
        }
        tick = CPipeWireShim_loopAddTimer(
            loop,
            { data, _ in
                guard let data else { return }
                Unmanaged<EngineCore>.fromOpaque(data).takeUnretainedValue().housekeeping()
            }, Unmanaged.passUnretained(self).toOpaque())
        let interval = UInt64(Self.tickInterval.components.attoseconds / 1_000_000_000)
        _ = CPipeWireShim_loopUpdateTimer(loop, tick, interval, interval)
        stayBusy()
    }

    /// Keeps the tick fast for ``busyWindow`` from now.
    func stayBusy() {
        busyUntil = .now + Self.busyWindow
        setTick(fast: true)
    }

    private func setTick(fast: Bool) {
        guard let tick, fast != tickIsFast else { return }
        tickIsFast = fast
        let interval = fast ? Self.tickInterval : Self.idleTickInterval
        let nanoseconds = UInt64(interval.components.attoseconds / 1_000_000_000)
        _ = CPipeWireShim_loopUpdateTimer(loop, tick, nanoseconds, nanoseconds)
    }

    /// Tears everything down for good (the engine is going away).
    func shutdown() {
        isShutDown = true
        if let tick {
            CPipeWireShim_loopDestroySource(loop, tick)
            self.tick = nil
        }
        disconnect()
        streams.removeAll()
        for id in bus.memberIDs { bus.remove(id) }
        capture = nil
        monitor = nil
    }

    /// Connects the core, watches the registry and opens every stream. Returns 0 or a negative errno.
    private func connect() -> Int32 {
        var properties: UnsafeMutablePointer<pw_properties>?
        if let remoteName {
            properties = CPipeWireShim_propertiesNew()
            pw_properties_set(properties, PW_KEY_REMOTE_NAME, remoteName)
        }
        // pw_context_connect takes the properties, whether it succeeds or not.
        guard let core = pw_context_connect(context, properties, 0) else { return -Int32(errno) }
        self.core = core
        brokenReason = nil
        _ = CPipeWireShim_coreAddListener(core, coreHook, coreEvents, Unmanaged.passUnretained(self).toOpaque())
        watcher = RegistryWatcher(core: core, observer: self)
        isRegistrySynced = false
        registrySync = CPipeWireShim_coreSync(core)
        for id in streams.keys.sorted() {
            do {
                try openNode(for: id)
            } catch {
                logger.error("reopening \(id) failed: \(error)")
                delivery.emit(.streamFault(stream: id, reason: "could not be reopened: \(error.message)"))
            }
        }
        if let capture {
            self.capture?.node = try? makeCaptureNode(ring: capture.ring, monitorOf: nil)
        }
        if let monitor {
            self.monitor?.node = try? makeCaptureNode(ring: monitor.ring, monitorOf: monitor.target ?? "")
        }
        return 0
    }

    /// Destroys the streams' nodes (keeping their renderers), the watchers and the core.
    private func disconnect() {
        collectClosing(at: .now, all: true)
        for id in streams.keys {
            streams[id]?.node?.destroy()
            streams[id]?.node = nil
        }
        capture?.node?.destroy()
        capture?.node = nil
        monitor?.node?.destroy()
        monitor?.node = nil
        destroyBusNode()
        watcher?.close()
        watcher = nil
        if let core {
            spa_hook_remove(coreHook)
            pw_core_disconnect(core)
            self.core = nil
        }
        for event in graph.disconnected() { delivery.emit(event) }
    }

    private func coreError(id: UInt32, result: Int32, message: String) {
        if id == CPipeWireShim_idCore, result == -EPIPE {
            connectionBroke("the connection to the PipeWire daemon broke (\(message))")
        } else {
            logger.warning("PipeWire error on object \(id): \(message) (\(result))")
        }
    }

    /// Notes the loss at once and reports it; the timer tears down and reconnects, since the
    /// core cannot be disconnected from inside its own callback.
    private func connectionBroke(_ reason: String) {
        guard brokenReason == nil, core != nil else { return }
        brokenReason = reason
        reconnect.lost(at: .now)
        stayBusy()
        logger.warning("\(reason); reconnecting")
        delivery.emit(.connectionLost(reason: reason))
    }

    /// Runs every ``tickInterval`` on the loop thread: reconnection, quantum changes, stream checks.
    private func housekeeping() {
        let now = ContinuousClock.now
        if brokenReason != nil, core != nil {
            disconnect()
            reconnect.tornDown(at: now)
        }
        if core == nil, reconnect.isReconnecting {
            guard reconnect.isAttemptDue(at: now) else { return }
            if connect() >= 0, let event = reconnect.attemptSucceeded(at: now) {
                stayBusy()
                logger.info("reconnected to PipeWire: \(event)")
                delivery.emit(event)
            } else {
                reconnect.attemptFailed(at: now)
            }
            return
        }
        let quantum = shared.quantum.load(ordering: .relaxed)
        if quantum != 0, quantum != reportedQuantum {
            reportedQuantum = quantum
            delivery.emit(.quantumChanged(frames: quantum))
        }
        for id in streams.keys.sorted() {
            guard let node = streams[id]?.node else { continue }
            if let fault = node.health.check(at: now) { delivery.emit(.streamFault(stream: id, reason: fault)) }
            if node.health.shouldRelink(at: now) { relink(id, after: node, at: now) }
        }
        busHousekeeping(at: now)
        collectClosing(at: now)
        if let node = capture?.node, node.health.shouldRelink(at: now), let ring = capture?.ring {
            node.destroy()
            capture?.node = try? makeCaptureNode(ring: ring, monitorOf: nil)
            capture?.node?.health = node.health.relinked(at: now)
        }
        if let node = monitor?.node, node.health.shouldRelink(at: now), let monitor {
            node.destroy()
            self.monitor?.node = try? makeCaptureNode(ring: monitor.ring, monitorOf: monitor.target ?? "")
            self.monitor?.node?.health = node.health.relinked(at: now)
        }
        if now >= busyUntil { setTick(fast: false) }
    }

    /// Makes a stream's node again: it never started (see ``StreamHealth/relinkAfter``).
    private func relink(_ id: StreamID, after node: PipeWireStream, at now: ContinuousClock.Instant) {
        logger.info("\(node.name) did not start within \(StreamHealth.relinkAfter); making its node again")
        node.destroy()
        streams[id]?.node = nil
        do {
            try openNode(for: id)
            streams[id]?.node?.health = node.health.relinked(at: now)
            stayBusy()
        } catch {
            delivery.emit(.streamFault(stream: id, reason: "could not be made again: \(error.message)"))
        }
    }

    // MARK: Streams

    func openStream(_ id: StreamID, descriptor: StreamDescriptor, renderer: StreamRenderer) throws(SessionError) {
        try checkNotShutDown("open \(id)")
        if let old = streams[id] {
            old.node?.destroy()
        }
        streams[id] = OpenStream(descriptor: descriptor, renderer: renderer, node: nil)
        stayBusy()
        guard core != nil, brokenReason == nil else { return }  // opened on reconnect
        do {
            try openNode(for: id)
        } catch {
            streams[id] = nil
            closeOnBus(id)
            throw error
        }
    }

    /// Closes a stream. One playing on a node of its own fades out over its de-click time first, as
    /// one on the overlay bus does, so closing it mid-play does not click; its node goes on the next
    /// ticks (within ``closingLimit``).
    func closeStream(_ id: StreamID) {
        if let open = streams[id], let node = open.node {
            if core != nil, brokenReason == nil, open.renderer.isAudible {
                open.renderer.setPaused(true)
                closing.append((node, open.renderer, .now + Self.closingLimit))
                stayBusy()
            } else {
                node.destroy()
            }
        }
        streams[id] = nil
        closeOnBus(id)
    }

    /// Destroys the nodes of closed streams that have faded out (all of them with `all`).
    private func collectClosing(at now: ContinuousClock.Instant, all: Bool = false) {
        closing.removeAll { entry in
            guard all || !entry.renderer.isAudible || now >= entry.deadline else { return false }
            entry.node.destroy()
            return true
        }
    }

    private func openNode(for id: StreamID) throws(SessionError) {
        guard let core, let open = streams[id] else { return }
        if layout.mixesOnBus(open.descriptor) { return try openOnBus(id, renderer: open.renderer) }
        var properties: [(String, String)] = [
            (PW_KEY_MEDIA_TYPE, "Audio"),
            (PW_KEY_MEDIA_CATEGORY, "Playback"),
            (PW_KEY_MEDIA_ROLE, open.descriptor.role.name),
            (PW_KEY_NODE_NAME, "\(nodePrefix).\(id.rawValue)"),
            (PW_KEY_NODE_DESCRIPTION, open.descriptor.name),
            (PW_KEY_APP_NAME, applicationName),
        ]
        if let target = open.descriptor.target {
            // Without this check the session manager would quietly play an unknown target on the
            // default sink, or leave the stream unlinked.
            guard graph.hasSink(named: target) else {
                throw SessionError(
                    code: .unknownTarget,
                    message: "no sink named \(target) on the PipeWire daemon (sinks: "
                        + "\(graph.sinkNames.joined(separator: ", "))): name one of them, or pass nil to "
                        + "follow the default sink")
            }
            properties.append((PW_KEY_TARGET_OBJECT, target))
        }
        let node = try PipeWireStream(
            core: core, id: id, kind: .playback(open.renderer), name: open.descriptor.name,
            properties: properties, format: format, shared: shared)
        node.observer = self
        streams[id]?.node = node
    }

    func startCapture(into ring: AudioRingBuffer) throws(SessionError) {
        try checkNotShutDown("start the voice capture")
        capture?.node?.destroy()
        capture = (ring, nil)
        guard core != nil, brokenReason == nil else { return }
        do {
            capture?.node = try makeCaptureNode(ring: ring, monitorOf: nil)
        } catch {
            capture = nil
            throw error
        }
    }

    func stopCapture() {
        capture?.node?.destroy()
        capture = nil
    }

    /// Records what a sink plays (its monitor): `target` names the sink, nil the default one.
    func startMonitor(into ring: AudioRingBuffer, target: String?) throws(SessionError) {
        try checkNotShutDown("record the sink")
        monitor?.node?.destroy()
        monitor = (ring, target, nil)
        guard core != nil, brokenReason == nil else { return }
        do {
            monitor?.node = try makeCaptureNode(ring: ring, monitorOf: target ?? "")
        } catch {
            monitor = nil
            throw error
        }
    }

    func stopMonitor() {
        monitor?.node?.destroy()
        monitor = nil
    }

    /// A capture stream of the default source, or with `monitorOf` of a sink's monitor ("" for
    /// the default sink).
    private func makeCaptureNode(ring: AudioRingBuffer, monitorOf sink: String?) throws(SessionError)
        -> PipeWireStream?
    {
        guard let core else { return nil }
        var properties: [(String, String)] = [
            (PW_KEY_MEDIA_TYPE, "Audio"),
            (PW_KEY_MEDIA_CATEGORY, "Capture"),
            (PW_KEY_MEDIA_ROLE, sink == nil ? "Communication" : "Production"),
            (PW_KEY_NODE_NAME, "\(nodePrefix).\(sink == nil ? "voice" : "monitor")"),
            (PW_KEY_APP_NAME, applicationName),
        ]
        if let sink {
            properties.append((PW_KEY_STREAM_CAPTURE_SINK, "true"))
            if !sink.isEmpty { properties.append((PW_KEY_TARGET_OBJECT, sink)) }
        }
        let node = try PipeWireStream(
            core: core, id: nil, kind: .capture(ring), name: sink == nil ? "voice capture" : "sink monitor",
            properties: properties, format: format, shared: shared)
        node.observer = self
        return node
    }

    // MARK: Callbacks

    private func coreDone(id: UInt32, seq: Int32) {
        if id == UInt32(PW_ID_CORE), seq == registrySync { isRegistrySynced = true }
    }

    private static func fillEvents(_ events: UnsafeMutablePointer<pw_core_events>) {
        events.pointee.version = UInt32(PW_VERSION_CORE_EVENTS)
        events.pointee.done = { data, id, seq in
            guard let data else { return }
            Unmanaged<EngineCore>.fromOpaque(data).takeUnretainedValue().coreDone(id: id, seq: seq)
        }
        events.pointee.error = { data, id, _, result, message in
            guard let data else { return }
            Unmanaged<EngineCore>.fromOpaque(data).takeUnretainedValue().coreError(
                id: id, result: result, message: message.map { String(cString: $0) } ?? "")
        }
    }
}

extension EngineCore: StreamObserver {
    func stream(_ node: PipeWireStream, changedFrom old: pw_stream_state, to new: pw_stream_state, error: String?) {
        logger.debug("\(node.name): \(Self.describe(old)) -> \(Self.describe(new))\(error.map { " (\($0))" } ?? "")")
        // Every node's health follows its state, the capture and monitor nodes' too: a node that never
        // seems to start is made again.
        let (from, to) = (Self.health(old), Self.health(new))
        let fault = node.health.changed(from: from, to: to, error: error, connectionBroken: brokenReason != nil)
        let ids = streamIDs(of: node)
        guard !ids.isEmpty else { return }
        if StreamHealth.isNodeCreated(from: from, to: to) { _ = node.setChannelVolume(1) }
        if let fault { for id in ids { delivery.emit(.streamFault(stream: id, reason: fault)) } }
    }

    func stream(_ node: PipeWireStream, volumesChanged volumes: [Float]) {
        let ids = streamIDs(of: node)
        guard !ids.isEmpty else { return }
        switch node.health.volumeReport(volumes, own: node.ownVolume, at: .now) {
        case .own:
            return
        case .restored:
            logger.info("\(node.name): a volume restored by the session manager; setting 1")
        case .external(let volume):
            logger.debug("\(node.name): volume \(volume) set from outside")
            for id in ids { delivery.emit(.externalVolumeChange(stream: id, volume: volume)) }
        }
        // The change was reported (or was a restore): undo it, so PipeWire never steps our level.
        _ = node.setChannelVolume(1)
    }

    private static func describe(_ state: pw_stream_state) -> String {
        String(cString: pw_stream_state_as_string(state))
    }

    private static func health(_ state: pw_stream_state) -> StreamHealth.State {
        switch state {
        case PW_STREAM_STATE_STREAMING: .streaming
        case PW_STREAM_STATE_PAUSED: .paused
        case PW_STREAM_STATE_CONNECTING: .connecting
        case PW_STREAM_STATE_ERROR: .error
        default: .unconnected
        }
    }
}

extension EngineCore: RegistryObserver {
    func nodeAdded(id: UInt32, mediaClass: String, name: String) {
        for event in graph.nodeAdded(id: id, mediaClass: mediaClass, name: name) { delivery.emit(event) }
    }

    func nodeRemoved(id: UInt32) {
        for event in graph.nodeRemoved(id: id) { delivery.emit(event) }
    }

    func defaultSinkChanged(to name: String?) {
        for event in graph.defaultSinkChanged(to: name) { delivery.emit(event) }
    }
}

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif
