public import SharedSession

/// Makes nodes of other PipeWire clients members of a session: the host's movie played by GStreamer
/// (`pipewiresink`) or mpv as the **main stream**, a web view's clip as an **overlay** of a unit.
///
/// The engine follows the registry and adopts every node of another client that matches a rule
/// (``AdoptionRule``), now or later: a player that makes a new node for each file, or after the daemon
/// restarted, is adopted again by the same rule, at the stream's current gain. The session's gains,
/// ducks, restores, volumes and pauses reach an adopted node through its `Props` `softVolumes`, ramped
/// in steps of equal decibels, one per quantum, over the policy's fade times (PipeWire applies them as a
/// step at the node's next cycle, and plays the node at them instead of its channel volumes). The node's
/// `channelVolumes`, `volume` and `mute` are never written: they stay the user's, as a desktop mixer and
/// the player show them and as WirePlumber saves them for the next stream of the same role.
///
/// ```swift
/// let adoption = try NodeAdoption(session: session, engine: engine)
/// adoption.setEventHandler { event in print(event) }        // adopted, released, user volume, pause…
/// let movie = try adoption.adoptMain(AdoptionRule(.processID(player.pid, includingChildren: true)))
/// let clip = try adoption.adoptOverlay(AdoptionRule(.applicationName("WebKitWebProcess")), unit: "social-feed")
/// ```
///
/// - An adopted overlay that starts playing is its unit's duck request (under the unit's limits, as
///   `SharedSession.duck(_:)` grants it): the engine reports `EngineEvent.streamPlaying(stream:playing:)`
///   to the session, which takes the duck; when the overlay stops, its node goes or its stream closes,
///   the duck is released.
/// - A volume a user sets on an adopted node from outside (`wpctl set-volume`, a desktop mixer) is the
///   stream's new host volume (the main's `mainVolume`): reported as ``AdoptionEvent/userVolume(stream:node:volume:)``
///   and as the session's own volume events, kept under ducks and restored to, never overwritten.
/// - Pausing the adopted main fades its node out to silence, and reports
///   ``AdoptionEvent/pauseRequested(stream:_:)`` so the host pauses its player (which otherwise keeps
///   running unheard); resuming fades it in.
/// - A node is **given back** at its own volume: at once when its stream closes, when this
///   `NodeAdoption` goes away (it closes the streams it opened) and when the engine shuts down (confirmed
///   by the daemon before the connection closes). If this process ends without any of that (an `exit`
///   that skipped the shutdown, a crash, SIGKILL), a watchdog process the engine started with its first
///   adoption gives every node back within milliseconds. Where the watchdog would die with this process
///   (a sandbox), the engine ducks through loopbacks the daemon removes with it instead
///   (``AdoptionCarrier``): see the AdoptingNodes article for the figures.
/// - A voice-activity duck (`DuckStyle.followActivity(_:level:)`) needs the main's samples, which an
///   adopted node never hands this process: on an adopted main it leaves the gain as the session set it.
public final class NodeAdoption: Sendable {
    /// The session the adopted nodes become members of.
    public let session: SharedSession
    private let engine: PipeWireEngine
    private let handler = Locked<Handler>(Handler())
    /// The streams it opened, closed when it goes away.
    private let handles = Locked<[StreamHandle]>([])

    /// Adopts nodes for `session` through `engine`, the session's engine. Starts the engine's adoption
    /// watchdog (a process of its own, see ``AdoptionEvent/watchdogUnavailable(reason:)``).
    ///
    /// - Throws: `SessionError` with code `invalidValue` if `engine` is not `session.engine`: the
    ///   session's gains would reach an engine that does not play its streams; `accessRefused` if the
    ///   daemon lets the engine's client only read other applications' nodes (a sandbox: see
    ///   ``PipeWireAccess``).
    public init(session: SharedSession, engine: PipeWireEngine) throws(SessionError) {
        guard session.engine === engine else {
            throw SessionError(
                code: .invalidValue,
                message: "the PipeWire engine given to NodeAdoption is not the session's engine "
                    + "(\(type(of: session.engine))): pass the engine the session was made with")
        }
        self.session = session
        self.engine = engine
        engine.setAdoptionEventHandler { [weak self] event in self?.receive(event) }
        do {
            try engine.startAdoptionWatchdog()
        } catch {
            engine.setAdoptionEventHandler(nil)
            throw error
        }
    }

    /// Closes the streams it opened: their nodes get their own volume back.
    deinit {
        engine.setAdoptionEventHandler(nil)
        for handle in handles.withLock({ $0 }) { handle.close() }
    }

    /// Receives every adoption event, in order, on the engine's event queue (never under a lock). The
    /// events emitted before the first handler was set (the watchdog's, as this adoption starts it:
    /// ``AdoptionEvent/watchdogUnavailable(reason:)``, ``AdoptionEvent/watchdogSharesFate(reason:)``) are
    /// given to it first, on the calling thread, before this returns.
    public func setEventHandler(_ handler: @escaping @Sendable (AdoptionEvent) -> Void) {
        let early = self.handler.withLock { state in
            defer { state.early = [] }
            state.receiver = handler
            return state.early
        }
        for event in early { handler(event) }
    }

    /// One event from the engine's queue: to the handler, or kept for the first one.
    private func receive(_ event: AdoptionEvent) {
        let receiver = handler.withLock { state in
            if state.receiver == nil, state.early.count < Handler.earlyLimit { state.early.append(event) }
            return state.receiver
        }
        receiver?(event)
    }

    /// The handler, and the events that came before it.
    private struct Handler {
        static let earlyLimit = 64
        var receiver: (@Sendable (AdoptionEvent) -> Void)?
        var early: [AdoptionEvent] = []
    }

    /// Opens the session's main stream made of the nodes `rule` matches: ducks, the host's volume and
    /// pauses act on them. Close the handle to give the nodes back their own volume.
    ///
    /// - Throws: `SessionError` with code `invalidValue` for a rule that is empty or would match this
    ///   process's own nodes (see ``AdoptionRule/validate()``), `mainStreamAlreadyOpen` if a main
    ///   stream is open.
    public func adoptMain(_ rule: AdoptionRule, name: String = "adopted main") throws(SessionError) -> StreamHandle {
        try open(
            StreamDescriptor(name: name, role: .movie), rule: rule, isMain: true, owner: nil, volume: 1, ducks: false)
    }

    /// Opens an overlay stream of `unit` made of the nodes `rule` matches, at `volume`. While any of
    /// them plays, and `ducks` is true, the session holds a duck of the movie for `unit` (under the
    /// unit's limits, as ``SharedSession/duck(_:)`` grants one).
    ///
    /// - Throws: `SessionError` with code `invalidValue` for a bad rule or volume.
    public func adoptOverlay(
        _ rule: AdoptionRule, unit: String, name: String? = nil, role: StreamRole = .music, volume: Float = 1,
        ducks: Bool = true
    ) throws(SessionError) -> StreamHandle {
        try open(
            StreamDescriptor(name: name ?? "\(unit) (adopted)", role: role), rule: rule, isMain: false, owner: unit,
            volume: volume, ducks: ducks)
    }

    /// Waits until every adoption event emitted so far has been handled (tests).
    @_spi(Testing) public func drainEvents() {
        engine.drainEvents()
    }

    private func open(
        _ descriptor: StreamDescriptor, rule: AdoptionRule, isMain: Bool, owner: String?, volume: Float, ducks: Bool
    ) throws(SessionError) -> StreamHandle {
        try check(rule)
        let handle = try session.openStream(descriptor, isMain: isMain, owner: owner, volume: volume) {
            [engine] id, gain, paused throws(SessionError) in
            try engine.adopt(id, rule: rule, ducksWhilePlaying: ducks, gain: gain, paused: paused)
        }
        handles.withLock { $0.append(handle) }
        return handle
    }

    private func check(_ rule: AdoptionRule) throws(SessionError) {
        try rule.validate()
        let own = ForeignNodeInfo(
            id: 0,
            properties: [
                "pipewire.sec.pid": "\(getpid())", "application.name": engine.applicationName,
                "application.process.binary": ProcessTree.binary(of: getpid()) ?? "",
                "node.name": "\(engine.nodePrefix).main",
            ], ancestorProcessIDs: ProcessTree.ancestors(of: getpid()))
        if let criterion = rule.criterion(matching: own) {
            throw SessionError(
                code: .invalidValue,
                message: "the adoption rule's \(criterion) matches this process's own streams; name the "
                    + "other player's process, application or node instead")
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
