internal import CPipeWire
internal import CPipeWireShim
import Logging
import SharedSession

/// The engine's state on the PipeWire loop, coordinating its parts: the connection
/// (``CoreConnection``), the streams' nodes (made by ``NodeFactory``), the overlay bus, the two
/// captures (``CaptureSlot``), the graph (``GraphTracker``), the reconnection (``ReconnectPolicy``) and
/// the one timer (``LoopTimer``), the one wake-up (``LoopSignal``) and the adopted nodes (the
/// ``AdoptionMachine`` it drives, see `EngineCore+Adoption.swift`). Reached only through
/// ``ThreadLoop/withLock(_:)`` or from PipeWire callbacks, which hold the loop lock; never from the data
/// thread.
///
/// Housekeeping follows PipeWire's events: a broken connection is torn down right after the core's
/// error, nodes' deadlines end when their state changes, the graph's changes arrive from the registry.
/// The timer is armed only for what no event announces (see ``EngineCore/housekeeping()``).
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
    let remoteName: String?
    /// What the client (and the adoption watchdog's) asks the session manager for.
    let access: PipeWireAccess
    let shared: RealtimeShared
    let delivery: EngineEventQueue
    let logger: Logger
    let factory: NodeFactory
    /// Which streams get a node of their own and which play through ``bus``.
    let layout: StreamLayout
    /// The overlay bus of the mixed layout (unused, without a node, in the per-stream layout).
    let bus: OverlayBus
    /// The nodes of other clients adopted as session streams: what the machine decides, and the
    /// PipeWire objects its actions act on (see `EngineCore+Adoption.swift`).
    var adoption: AdoptionMachine
    var adopted = AdoptedNodes()
    /// The adopted nodes' loopbacks, when the session's gain reaches them that way (``AdoptionCarrier``),
    /// and why it does.
    let loopbacks: LoopbackDucks
    let carrierReason: String?
    private(set) lazy var connection = CoreConnection(
        context: context, remoteName: remoteName, mediaCategory: access.mediaCategory, logger: logger,
        observer: self)
    /// Armed for the next thing due that no event announces; nil before ``start()`` and after ``shutdown()``.
    private var timer: LoopTimer?
    /// Wakes the loop from any thread to take the adopted streams' commands and the suspension.
    let wake = LoopSignal()
    private var wakeSource: UnsafeMutablePointer<spa_source>?

    private(set) var streams: [StreamID: OpenStream] = [:]
    /// Which loudness-duck readings of the streams were reported.
    private var loudnessReports = LoudnessDuckReports()
    /// Nodes of closed streams fading out over their renderer's de-click time: destroyed once the
    /// renderer is silent, or at the deadline whatever happens.
    private var closing: [(node: PipeWireStream, renderer: StreamRenderer, deadline: ContinuousClock.Instant)] = []
    /// The longest a closed stream's node is kept for its fade: a few quanta of the largest size.
    static let closingLimit = Duration.milliseconds(300)
    /// How often a fade or a table the data thread may still read is looked at: the data thread finishes
    /// them without telling the loop (waking it would be a system call in the process callback).
    static let fadeCheckInterval = Duration.milliseconds(20)
    /// The voice input and the sink monitor (see `EngineCore+Captures.swift`).
    let voice: CaptureSlot
    let monitor: CaptureSlot
    /// The voice's echo canceller (see `EngineCore+EchoCancel.swift`), and whether the active
    /// configuration asks for it.
    let echo: EchoCanceller
    var wantsEchoCancellation = false

    private var reconnect = ReconnectPolicy()
    /// Set when the connection broke, until the housekeeping has torn it down.
    private var brokenReason: String?
    private var quantum = QuantumWatch()
    /// The output latency last reported for each stream (read when the quantum is).
    private var latency = LatencyWatch()
    /// When the housekeeping last ran: fades are looked at ``fadeCheckInterval`` after it, however
    /// often events re-arm the timer meanwhile.
    private var lastHousekeeping = ContinuousClock.now
    var graph: GraphTracker
    /// Set by ``shutdown()``: the context is gone and nothing may be opened any more.
    private(set) var isShutDown = false

    init(
        loop: UnsafeMutablePointer<pw_loop>, context: OpaquePointer, applicationName: String, remoteName: String?,
        access: PipeWireAccess = .standard, adoptionCarrier: AdoptionCarrier = .softVolumes, nodePrefix: String,
        layout: StreamLayout = .perStream, format: AudioFormat,
        shared: RealtimeShared,
        delivery: EngineEventQueue, logger: Logger
    ) {
        self.loop = loop
        self.context = context
        self.remoteName = remoteName
        self.access = access
        self.layout = layout
        self.bus = OverlayBus(format: format)
        self.graph = GraphTracker(ownPrefix: nodePrefix)
        let fate = SharedFate.current().reason
        adoption = AdoptionMachine(
            book: AdoptionBook(ownProcessID: getpid(), ownPrefix: nodePrefix, ancestors: ProcessTree.ancestors(of:)),
            throughLoopbacks: adoptionCarrier.throughLoopbacks(watchdogSharesFate: fate != nil))
        carrierReason =
            adoptionCarrier == .automatic
            ? fate.map { "the adoption watchdog would die with this process: \($0)" } : "the host asked for it"
        loopbacks = LoopbackDucks(context: context, remoteName: remoteName, nodePrefix: nodePrefix, logger: logger)
        self.shared = shared
        self.delivery = delivery
        self.logger = logger
        factory = NodeFactory(nodePrefix: nodePrefix, applicationName: applicationName, format: format, shared: shared)
        voice = CaptureSlot(.voice, factory: factory)
        monitor = CaptureSlot(.sinkMonitor, factory: factory)
        echo = EchoCanceller(
            context: context, remoteName: remoteName, nodePrefix: nodePrefix, applicationName: applicationName,
            logger: logger)
        echo.reload = { [unowned self] in self.echoCancellerWentAway() }
        echo.sourceReady = { [unowned self] in self.echoSourceReady() }
        echo.deadlinesChanged = { [unowned self] in self.reschedule() }
        loopbacks.deadlinesChanged = { [unowned self] in self.reschedule() }
        loopbacks.setTarget = { [unowned self] node, serial in
            self.connection.setDefaultMetadata(
                subject: node, key: "target.object", type: serial == nil ? nil : "Spa:Id", value: serial)
        }
    }

    /// The core while connected and not known to be broken: nodes are made on it.
    var core: OpaquePointer? { brokenReason == nil ? connection.core : nil }
    var isConnected: Bool { core != nil }
    var isRegistrySynced: Bool { connection.isRegistrySynced }
    /// The default sink the streams follow, as the daemon's metadata says.
    var defaultSink: String? { graph.defaultSink }

    func checkNotShutDown(_ what: String) throws(SessionError) {
        guard !isShutDown else {
            throw SessionError(
                code: .engineUnavailable, message: "cannot \(what): the PipeWire engine was shut down; make a new one")
        }
    }

    // MARK: Connection

    /// Connects for the first time and adds the timer. Throws, saying where it looked and what the user
    /// can do, when no daemon answers.
    func start() throws(SessionError) {
        let result = connect()
        guard result >= 0 else { throw .noDaemon(at: connection.socket, result: result) }
        timer = LoopTimer(loop: loop) { [unowned self] in self.housekeeping() }
        wakeSource = CPipeWireShim_loopAddEvent(
            loop,
            { data, _ in
                guard let data else { return }
                Unmanaged<EngineCore>.fromOpaque(data).takeUnretainedValue().takeCommands()
            }, Unmanaged.passUnretained(self).toOpaque())
        wake.attach(loop: loop, source: wakeSource)
        reschedule()
    }

    /// Whether the daemon confirmed the sync `seq` (or the connection is gone, and with it the nodes).
    func isConfirmed(_ seq: Int32) -> Bool {
        core == nil || connection.lastDone >= seq
    }

    /// Tears everything down for good (the engine is going away).
    func shutdown() {
        isShutDown = true
        timer?.destroy()
        timer = nil
        wake.detach()
        if let wakeSource { CPipeWireShim_loopDestroySource(loop, wakeSource) }
        wakeSource = nil
        disconnect()
        adoptionShutdown()
        streams.removeAll()
        for id in bus.memberIDs { bus.remove(id) }
        voice.stop()
        monitor.stop()
        echo.shutdown()
    }

    /// Connects the core, watches the registry and opens every stream. Returns 0 or a negative errno.
    private func connect() -> Int32 {
        let result = connection.connect()
        guard result >= 0, let core = connection.core else { return result }
        brokenReason = nil
        for id in streams.keys.sorted() {
            do {
                try openNode(for: id)
            } catch {
                logger.error("reopening \(id) failed: \(error)")
                delivery.emit(.streamFault(stream: id, reason: "could not be reopened: \(error.message)"))
            }
        }
        if !reconnectEchoCanceller() { voice.reopen(core: core, observer: self) }
        monitor.reopen(core: core, observer: self)
        return 0
    }

    /// Destroys the streams' nodes (keeping their renderers), the watchers and the core.
    private func disconnect() {
        collectClosing(at: .now, all: true)
        for id in streams.keys {
            streams[id]?.node?.destroy()
            streams[id]?.node = nil
        }
        voice.dropNode()
        monitor.dropNode()
        echo.unload()
        destroyBusNode()
        adoptionDisconnected()
        connection.disconnect()
        for event in graph.disconnected() { delivery.emit(event) }
    }

    /// Notes the loss at once and reports it; the timer, armed to fire at once, tears the connection
    /// down after this callback returns (the core cannot be disconnected from inside its own callback).
    func connectionBroke(_ reason: String) {
        guard brokenReason == nil, connection.core != nil else { return }
        brokenReason = reason
        reconnect.lost(at: .now)
        logger.warning("\(reason); reconnecting")
        delivery.emit(.connectionLost(reason: reason))
        reschedule()
    }

    // MARK: Housekeeping

    /// Runs when the timer fires, on the loop thread: whatever is due, then the timer is armed for the
    /// next thing due. What it waits for, and why a timer:
    /// - a broken connection's teardown: at once after the core's error (an event), outside its callback;
    /// - the reconnection's back-off (100 ms to 2 s): no event says a daemon has come back;
    /// - a node's never-started deadline and relink (3 s): a node that never starts sends nothing;
    /// - a closed node's or overlay's fade and the overlay bus's retired tables: the data thread finishes
    ///   them and must not wake the loop (a system call in the process callback);
    /// - the quantum, which the daemon re-plans without telling clients (``QuantumWatch``);
    /// - the echo canceller's retry after it went away (250 ms) and the voice's wait for its source (2 s);
    /// - an adopted node's ramp steps (one a quantum) and settle writes, and an adoption's wait for a
    ///   node that matches (``AdoptionMachine/nextDue(after:quantum:)``).
    func housekeeping() {
        let now = ContinuousClock.now
        lastHousekeeping = now
        if brokenReason != nil, connection.core != nil {
            disconnect()
            reconnect.tornDown(at: now)
        }
        if connection.core == nil {
            if reconnect.isReconnecting, reconnect.isAttemptDue(at: now) {
                if connect() >= 0, let event = reconnect.attemptSucceeded(at: now) {
                    logger.info("reconnected to PipeWire: \(event)")
                    delivery.emit(event)
                } else {
                    reconnect.attemptFailed(at: now)
                }
            }
            return reschedule()
        }
        if let event = quantum.read(shared.quantum.load(ordering: .relaxed), at: now) { delivery.emit(event) }
        readLatencies()
        reportLoudnessDucks()
        for id in streams.keys.sorted() {
            guard let node = streams[id]?.node else { continue }
            if let fault = node.health.check(at: now) { delivery.emit(.streamFault(stream: id, reason: fault)) }
            if node.health.shouldRelink(at: now) { relink(id, after: node, at: now) }
        }
        busHousekeeping(at: now)
        adoptionHousekeeping(at: now)
        echo.housekeeping(at: now)
        collectClosing(at: now)
        if let core {
            voice.housekeeping(at: now, core: core, observer: self)
            monitor.housekeeping(at: now, core: core, observer: self)
        }
        reschedule()
    }

    /// Arms the timer for the earliest thing due (see ``housekeeping()``), or disarms it.
    func reschedule() {
        guard let timer else { return }
        let now = ContinuousClock.now
        guard connection.core != nil else { return timer.arm(for: reconnect.nextAttempt) }
        guard brokenReason == nil else { return timer.arm(for: now) }
        // Closing nodes are left out: they go at their fade's end or deadline, started or not.
        let nodes = streams.values.compactMap(\.node) + [bus.node, voice.node, monitor.node].compactMap { $0 }
        var due = nodes.compactMap(\.health.nextDeadline) + closing.map(\.deadline)
        if !closing.isEmpty || bus.hasPendingWork { due.append(lastHousekeeping + Self.fadeCheckInterval) }
        if let read = quantum.nextRead(after: now, playing: !nodes.isEmpty || !closing.isEmpty) { due.append(read) }
        if let adoptionDue = adoptionDue(after: now) { due.append(adoptionDue) }
        if let echoDue = echo.nextDue { due.append(echoDue) }
        // A loudness duck's depth is reported as it moves: looked at every 100 ms, its step.
        if streams.contains(where: { $0.value.renderer.loudnessDuck != nil || loudnessReports.isOn($0.key) }) {
            due.append(lastHousekeeping + Self.loudnessCheckInterval)
        }
        timer.arm(for: due.min())
    }

    /// Reports each stream's output latency that changed and each latency a node refused since the
    /// last look. Read with the quantum: often while the graph may be re-planning (a route change, a
    /// node added), every ``QuantumWatch/quietInterval`` otherwise.
    private func readLatencies() {
        for id in streams.keys.sorted() {
            guard let open = streams[id] else { continue }
            if let event = latency.read(open.renderer.outputLatency, of: id) { delivery.emit(event) }
            if let node = open.node {
                for event in latency.readRefusals(node.timing, of: [id]) { delivery.emit(event) }
            }
        }
        if let node = bus.node {
            for event in latency.readRefusals(node.timing, of: bus.memberIDs) { delivery.emit(event) }
        }
    }

    /// Reports each stream's loudness duck that was set or removed, or whose depth moved by a report's
    /// step, since the last look (``LoudnessDuckReports``).
    private func reportLoudnessDucks() {
        for id in streams.keys.sorted() {
            guard let renderer = streams[id]?.renderer else { continue }
            if let event = loudnessReports.event(for: renderer.loudnessDuck, of: id) { delivery.emit(event) }
        }
    }

    /// How often a loudness duck's depth is looked at while one is set: its 100 ms step.
    static let loudnessCheckInterval = Duration.milliseconds(100)

    /// Something that may change the graph's quantum happened: read it often for a while.
    func expectQuantumChange() {
        quantum.expectChange(at: .now)
        reschedule()
    }

    /// Makes a stream's node again: it never started (see ``StreamHealth/shouldRelink(at:)``).
    private func relink(_ id: StreamID, after node: PipeWireStream, at now: ContinuousClock.Instant) {
        logger.info("\(node.name) \(node.health.relinkReason); making its node again")
        node.destroy()
        streams[id]?.node = nil
        do {
            try openNode(for: id)
            streams[id]?.node?.health = node.health.relinked(at: now)
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
        defer { reschedule() }
        guard core != nil else { return }  // opened on reconnect
        do {
            try openNode(for: id)
        } catch {
            streams[id] = nil
            loudnessReports.forget(id)
            closeOnBus(id)
            throw error
        }
    }

    /// Closes a stream. One playing on a node of its own fades out over its de-click time first, as
    /// one on the overlay bus does, so closing it mid-play does not click; its node goes once the fade
    /// is over (within ``closingLimit``).
    func closeStream(_ id: StreamID) {
        if let open = streams[id], let node = open.node {
            if core != nil, open.renderer.isAudible {
                open.renderer.setPaused(true)
                closing.append((node, open.renderer, .now + Self.closingLimit))
            } else {
                node.destroy()
            }
        }
        streams[id] = nil
        loudnessReports.forget(id)
        latency.forget(id)
        closeOnBus(id)
        reschedule()
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
        guard let core = connection.core, let open = streams[id] else { return }
        if layout.mixesOnBus(open.descriptor) { return try openOnBus(id, renderer: open.renderer) }
        // Without this check the session manager would quietly play an unknown target on the default
        // sink, or leave the stream unlinked.
        if let target = open.descriptor.target, !graph.hasSink(named: target) {
            throw SessionError(
                code: .unknownTarget,
                message: "no sink named \(target) on the PipeWire daemon (sinks: "
                    + "\(graph.sinkNames.joined(separator: ", "))): name one of them, or pass nil to "
                    + "follow the default sink")
        }
        streams[id]?.node = try factory.playback(
            core: core, id: id, descriptor: open.descriptor, renderer: open.renderer, observer: self)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
