internal import CPipeWireShim
public import Logging
public import SharedSession
import Synchronization

/// An `AudioEngine` that plays the session's streams as PipeWire streams of one client.
///
/// Each stream the session opens is a `pw_stream` (F32 stereo 48 kHz, `media.role` from its
/// `StreamDescriptor`) whose real-time process callback renders it with a `StreamRenderer`: gains
/// and pauses ramp per sample there, never through PipeWire's stepped stream volume, which the
/// engine holds at 1. With ``StreamLayout/mixedOverlays`` (see ``layout``) the overlays are instead
/// rendered, each by its own `StreamRenderer`, into one overlay-bus `pw_stream` beside the main one.
/// Voice capture is a capture stream of the default source.
///
/// The engine watches the graph and reports, through the handler given to
/// ``setEventHandler(_:)``: another client's playback starting and stopping, the default sink
/// changing or going away, a volume set on one of its streams from outside, a stream paused by the
/// server or never started, the quantum changing, and the connection breaking. When the daemon goes
/// away it reconnects with a growing delay (100 ms to 2 s) and reopens every stream with the gain
/// and pause state it had.
///
/// Creating one needs a running PipeWire daemon reachable through `XDG_RUNTIME_DIR`; without one
/// the initializer throws `SessionError` with code `engineUnavailable`, whose message names the
/// runtime directory and socket it tried and how to start a daemon (a desktop session, or
/// `systemctl --user start pipewire wireplumber`), and the host can use the offline engine instead.
public final class PipeWireEngine: AudioEngine {
    public let format: AudioFormat = .standard

    private let loop: ThreadLoop<EngineCore>
    private let shared: RealtimeShared
    private let delivery: EngineEventQueue
    private let logger: Logger
    private let isShutDown = Atomic<Bool>(false)

    /// How the engine lays its streams out as PipeWire nodes: each its own (``StreamLayout/perStream``,
    /// the default), or the overlays mixed into one node (``StreamLayout/mixedOverlays``).
    public let layout: StreamLayout

    /// The `application.name` of the engine's streams.
    public let applicationName: String
    /// Prefix of the `node.name` of every node of this engine.
    let nodePrefix: String
    /// Wakes the engine's loop thread (see `EngineCore+Adoption.swift`).
    private let wake: LoopSignal

    /// Connects to the PipeWire daemon.
    ///
    /// - Parameters:
    ///   - applicationName: The `application.name` the daemon shows for the streams.
    ///   - remoteName: The daemon's socket in `XDG_RUNTIME_DIR` (`remote.name`); nil for PipeWire's
    ///     default (`PIPEWIRE_REMOTE`, else `pipewire-0`).
    ///   - layout: Which streams get a PipeWire node of their own: ``StreamLayout/perStream`` (every
    ///     stream, each visible and adjustable in the desktop's mixer) or ``StreamLayout/mixedOverlays``
    ///     (the main stream its own node, the other streams mixed in this process into one overlay
    ///     node, which costs the daemon much less with many overlays).
    ///   - access: What the client asks the session manager for: ``PipeWireAccess/manager`` lets a host in
    ///     a sandbox (Flatpak) adopt other players' nodes.
    ///   - adoptionCarrier: Where the session's gain reaches an adopted node (see ``AdoptionCarrier``):
    ///     by default through a loopback when this process's watchdog would die with it (a sandbox),
    ///     through the node's soft volumes otherwise.
    ///   - logger: Where the engine logs; never used on the real-time thread.
    /// - Throws: `SessionError` with code `engineUnavailable` if no daemon can be reached; the
    ///   message says where the engine looked (the runtime directory, from `XDG_RUNTIME_DIR`, and the
    ///   socket paths tried) and how to start a daemon.
    public init(
        applicationName: String = "SharedSession", remoteName: String? = nil, layout: StreamLayout = .perStream,
        access: PipeWireAccess = .standard, adoptionCarrier: AdoptionCarrier = .automatic,
        logger: Logger = Logger(label: "SharedSession.PipeWire")
    ) throws(SessionError) {
        let shared = RealtimeShared()
        let delivery = EngineEventQueue(label: "SharedSession.PipeWire.events")
        let prefix = "sharedsession.\(getpid()).\(Self.engineCounter.add(1, ordering: .relaxed).newValue)"
        Self.warmUp()
        self.shared = shared
        self.applicationName = applicationName
        self.nodePrefix = prefix
        self.layout = layout
        self.delivery = delivery
        self.logger = logger
        loop = try ThreadLoop(name: "sharedsession-pw") { loop, context in
            EngineCore(
                loop: loop, context: context, applicationName: applicationName, remoteName: remoteName,
                access: access, adoptionCarrier: adoptionCarrier, nodePrefix: prefix, layout: layout,
                format: .standard, shared: shared, delivery: delivery, logger: logger)
        }
        wake = loop.withLock { $0.wake }
        do throws(SessionError) {
            try loop.withLock { core throws(SessionError) in try core.start() }
        } catch {
            loop.stop { $0.shutdown() }
            throw error
        }
        // Wait (briefly: one round trip, a few ms) for the registry's first enumeration, so a
        // stream opened right away that names its target sink finds it.
        let deadline = ContinuousClock.now + .seconds(2)
        while !loop.withLock({ $0.isRegistrySynced }), ContinuousClock.now < deadline {
            usleep(2_000)
        }
    }

    deinit {
        handBackAdoptedNodes()
        loop.stop { $0.shutdown() }
    }

    /// Closes every stream and the connection, and stops the engine's threads. Adopted nodes (see
    /// ``NodeAdoption``) get their own volume back first, confirmed by the daemon before the connection
    /// closes, as do those of adopted streams closed just before. The engine is unusable afterwards;
    /// `deinit` does the same.
    public func shutdown() {
        isShutDown.store(true, ordering: .relaxed)
        handBackAdoptedNodes()
        loop.stop { $0.shutdown() }
    }

    /// How long a shutdown waits for the daemon to confirm the adopted nodes' give-back.
    static let handBackLimit = Duration.milliseconds(500)

    /// Writes the adopted nodes' own volumes and waits (outside the loop's lock, so the loop thread
    /// sends them and reads the answer) until the daemon has applied them and every give-back before
    /// them, or ``handBackLimit``.
    private func handBackAdoptedNodes() {
        guard let seq = loop.withLock({ $0.handBackAdoptedNodes() }) else { return }
        let deadline = ContinuousClock.now + Self.handBackLimit
        while !loop.withLock({ $0.isConfirmed(seq) }), ContinuousClock.now < deadline {
            usleep(500)
        }
    }

    /// Starts the adoption watchdog now, if it is not running, so the first adoption does not wait
    /// for it (see ``NodeAdoption``). Throws `accessRefused` when the daemon lets this client only read
    /// other applications' nodes (a sandbox): nothing could be adopted.
    func startAdoptionWatchdog() throws(SessionError) {
        try loop.withLock { core throws(SessionError) in
            try core.checkAdoptionAccess()
            core.startAdoptionWatchdog()
        }
    }

    /// The adoption watchdog's process id while it runs (tests).
    @_spi(Testing) public var adoptionWatchdogProcessID: Int32? { loop.withLock { $0.adopted.watchdog?.processID } }

    /// Adopts the nodes of other clients that `rule` matches, now and later, as the session stream `id`
    /// (see ``NodeAdoption``, which calls it as the session opens the stream): the engine's entry point
    /// for a stream that other processes play. The returned control's gains and pauses reach the nodes'
    /// soft volumes from the loop thread. With `ducksWhilePlaying`, the engine reports
    /// `EngineEvent.streamPlaying(stream:playing:)` as the stream's nodes start and stop playing, and the
    /// session holds a duck for the stream's owner meanwhile.
    ///
    /// - Throws: `SessionError` with code `engineUnavailable` after ``shutdown()``.
    func adopt(_ id: StreamID, rule: AdoptionRule, ducksWhilePlaying: Bool, gain: Float, paused: Bool)
        throws(SessionError) -> any StreamControl
    {
        try loop.withLock { core throws(SessionError) in
            try core.adopt(id, rule: rule, ducksWhilePlaying: ducksWhilePlaying, gain: gain, paused: paused)
        }
    }

    /// Where the adoption events go (see ``NodeAdoption``): on the queue of the engine's events, in
    /// order with them.
    func setAdoptionEventHandler(_ handler: (@Sendable (AdoptionEvent) -> Void)?) {
        delivery.setAdoptionHandler(handler)
    }

    // MARK: State

    public var quantum: Int { shared.quantum.load(ordering: .relaxed) }

    /// Whether the data thread that runs the process callbacks has real-time scheduling
    /// (SCHED_FIFO or SCHED_RR). False until the first process callback has run.
    public var isRealtime: Bool {
        let thread = shared.dataThread.load(ordering: .relaxed)
        guard thread != 0 else { return false }
        let policy = CPipeWireShim_schedulingPolicy(pthread_t(thread))
        return policy == CPipeWireShim_schedFIFO() || policy == CPipeWireShim_schedRR()
    }

    /// Whether the engine is connected to the daemon now (false while it reconnects).
    public var isConnected: Bool { loop.withLock { $0.isConnected } }

    /// The name of the default sink the streams follow, as the daemon's metadata says.
    public var defaultSink: String? { loop.withLock { $0.defaultSink } }

    /// The `node.name`s of the sinks on the daemon, sorted, as the engine's view of the graph has them:
    /// what a `StreamDescriptor.target` may name. A sink made a moment ago (a `DeclaredLatencySink`)
    /// is here once the daemon's announcement of it has reached the engine, a few milliseconds later.
    public var sinkNames: [String] { loop.withLock { $0.graph.sinkNames } }

    /// The data thread's `pthread_t` (as an integer), once a process callback has run: for tests
    /// that count what that thread does.
    @_spi(Testing) public var dataThreadID: UInt? {
        let thread = shared.dataThread.load(ordering: .relaxed)
        return thread == 0 ? nil : thread
    }

    /// Frames of the most recent capture cycle (the graph's quantum while a capture runs): for tests
    /// that record the sink's monitor and play nothing.
    @_spi(Testing) public var captureQuantum: Int { shared.captureQuantum.load(ordering: .relaxed) }

    /// Process callbacks run so far, over all streams.
    @_spi(Testing) public var processCycles: Int { shared.cycles.load(ordering: .relaxed) }

    /// Records the monitor of `sink` (nil: the default sink) into `ring`, through a capture stream
    /// that survives reconnections like the others. For tests that measure what was played.
    @_spi(Testing) public func startMonitorRecording(
        into ring: AudioRingBuffer, sink: String? = nil
    ) throws(SessionError) {
        try loop.withLock { core throws(SessionError) in try core.startMonitor(into: ring, target: sink) }
    }

    /// Stops ``startMonitorRecording(into:sink:)``.
    @_spi(Testing) public func stopMonitorRecording() {
        loop.withLock { $0.stopMonitor() }
    }

    /// Waits until every event emitted so far has reached the handler.
    @_spi(Testing) public func drainEvents() {
        delivery.drain()
    }

    // MARK: AudioEngine

    public func setEventHandler(_ handler: @escaping @Sendable (EngineEvent) -> Void) {
        delivery.setHandler(handler)
    }

    /// Accepts any configuration while the engine is running: PipeWire has no session categories,
    /// and the voice configuration's input is opened by ``startCapture(into:)``. A configuration whose
    /// mode asks for voice processing (``AudioSessionMode/usesVoiceProcessing``: `voiceChat`,
    /// `videoChat`) has its input echo-cancelled against what the default sink plays, by PipeWire's
    /// echo-cancel module with the WebRTC canceller (see ``isEchoCancelling``).
    ///
    /// - Throws: `SessionError` with code `engineUnavailable` after ``shutdown()``.
    public func activate(_ configuration: SessionConfiguration) throws(SessionError) {
        guard !isShutDown.load(ordering: .relaxed) else {
            throw SessionError(
                code: .engineUnavailable,
                message: "cannot activate \(configuration): the PipeWire engine was shut down; make a new one")
        }
        let voiceProcessing = configuration.mode.usesVoiceProcessing && configuration.category.recordsInput
        loop.withLock { $0.setVoiceProcessing(voiceProcessing) }
    }

    /// Whether the voice input is echo-cancelled now: a configuration that asks for voice processing is
    /// active, the voice is being captured, and PipeWire's echo-cancel module is loaded (its nodes are
    /// named after this engine, `….echo-cancel.capture`, `.reference` and `.source`). The module is
    /// unloaded when the capture stops, and loaded again when the engine reconnects after the daemon
    /// restarted. False when the module cannot be loaded: the voice is then captured without
    /// cancellation, and the engine logs why.
    public var isEchoCancelling: Bool { loop.withLock { $0.isEchoCancelling } }

    public func deactivate(notifyingOthers: Bool) {
        // PipeWire has no notion of telling other clients to resume: they never paused for us.
    }

    /// Opens the stream as a `pw_stream` and returns its renderer, whose control side the session
    /// changes gains and pauses through (atomic stores, no lock). The renderer outlives reconnections.
    public func openStream(
        _ id: StreamID, descriptor: StreamDescriptor, source: any AudioSource, gain: Float, paused: Bool
    ) throws(SessionError) -> any StreamControl {
        // The quantum rendered last is queued when a gain change arrives: ramps end their length after
        // the call, as heard, not a quantum later.
        let renderer = StreamRenderer(
            source: source, gain: gain, paused: paused, format: format, shortensRampsByQueuedQuantum: true)
        try loop.withLock { core throws(SessionError) in
            try core.openStream(id, descriptor: descriptor, renderer: renderer)
        }
        return renderer
    }

    public func closeStream(_ id: StreamID) {
        loop.withLock { core in
            if !core.closeAdopted(id) { core.closeStream(id) }
        }
    }

    public func setSuspended(_ suspended: Bool) {
        shared.suspended.store(suspended, ordering: .relaxed)
        wake.signal()  // adopted nodes fade out (or in) from the loop thread
    }

    public func startCapture(into ring: AudioRingBuffer) throws(SessionError) {
        try loop.withLock { core throws(SessionError) in try core.startCapture(into: ring) }
    }

    public func stopCapture() {
        loop.withLock { $0.stopCapture() }
    }

    // MARK: Internals

    private static let engineCounter = Atomic<Int>(0)

    /// Runs the render kernel once on this thread, so whatever it does only the first time
    /// (lazy globals, generic metadata in debug builds) never happens on the real-time thread.
    private static func warmUp() {
        final class Silence: AudioSource {
            func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int { 0 }
        }
        let renderer = StreamRenderer(source: Silence(), gain: 1, paused: false)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2048 * 2)
        defer { buffer.deallocate() }
        renderer.setGain(0.5, rampFrames: 100)
        renderer.render(into: buffer, frames: 2048, accumulate: false, suspended: false)
        renderer.render(into: buffer, frames: 256, accumulate: false, suspended: true)
    }
}

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif
