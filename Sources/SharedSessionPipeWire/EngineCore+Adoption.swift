internal import CPipeWire
internal import CPipeWireShim
import SharedSession

/// The PipeWire objects of the adoption (see ``NodeAdoption``): what ``AdoptionMachine``'s actions
/// act on. Held by the ``EngineCore`` and used only on its loop.
struct AdoptedNodes {
    var nodeProxies: [UInt32: ForeignNodeProxy] = [:]
    var clientProxies: [UInt32: ForeignClientProxy] = [:]
    /// The control side of each adopted stream, whose commands the loop takes when woken.
    var controls: [StreamID: AdoptedNodeControl] = [:]
    /// The registry of the connection, while connected: proxies are bound from it.
    var registry: OpaquePointer?
    /// The process that gives the nodes back if this one dies; started with the first adoption.
    var watchdog: AdoptionWatchdog?
    var watchdogFailure: SessionError?
    /// Nodes given back whose write the daemon has not confirmed yet, by the sync that will: the
    /// watchdog keeps them until then, so a process that exits right after a close still gives them
    /// back (the write may still be in the connection's buffer when the process goes).
    var unconfirmed: [(seq: Int32, nodes: [UInt32])] = []
    /// Nodes given back whose write could not be made (no proxy, or the write failed): the watchdog
    /// keeps them, and gives them back when it stops.
    var unwritten: Set<UInt32> = []

    /// A node of another client whose `Props` this client may not write, as the registry announced it:
    /// the daemon gives this client read-only access (a sandbox), so nothing can be adopted.
    var readOnlyNode: String?
    /// Whether ``AdoptionEvent/throughLoopbacks(reason:)`` was reported.
    var carrierReported = false

    /// The nodes given back whose write the daemon has not applied for sure.
    var awaitingGiveBack: Set<UInt32> { unwritten.union(unconfirmed.flatMap(\.nodes)) }

    /// Destroys every proxy (before the core goes).
    mutating func destroyProxies() {
        for proxy in nodeProxies.values { proxy.destroy() }
        for proxy in clientProxies.values { proxy.destroy() }
        nodeProxies.removeAll()
        clientProxies.removeAll()
    }
}

/// The engine drives the adoption: the machine decides, the engine performs its actions on its one
/// loop, with its one timer (``EngineCore/reschedule()`` arms it for the machine's next step too),
/// its one wake-up (the controls' commands, the suspension) and its one event delivery.
extension EngineCore {
    // MARK: Entry points

    /// Opens a session stream made of the nodes `rule` matches (the engine's explicit entry point for a
    /// stream played by other processes: ``PipeWireEngine/adopt(_:rule:ducksWhilePlaying:gain:paused:)``).
    func adopt(_ id: StreamID, rule: AdoptionRule, ducksWhilePlaying: Bool, gain: Float, paused: Bool)
        throws(SessionError) -> AdoptedNodeControl
    {
        try checkNotShutDown("adopt \(rule) as \(id)")
        try checkAdoptionAccess()
        startAdoptionWatchdog()
        let control = AdoptedNodeControl(wake: wake)
        adopted.controls[id] = control
        perform(
            adoption.open(id, rule: rule, ducksWhilePlaying: ducksWhilePlaying, gain: gain, paused: paused, at: .now))
        reschedule()
        return control
    }

    /// Closes the stream if it is an adopted one: its nodes get their own volume back at once. Returns
    /// false for a stream of another kind.
    func closeAdopted(_ id: StreamID) -> Bool {
        guard adoption.adopts(id) else { return false }
        adopted.controls.removeValue(forKey: id)?.detach()
        perform(adoption.close(id))
        reschedule()
        return true
    }

    /// Gives every adopted node back (its soft volumes set to its channel volumes, the user's) before the
    /// engine goes: returns the sequence number of the sync whose `done` says the daemon has applied every
    /// give-back so far, these and those of streams closed just before (a host that closes its adopted
    /// stream and shuts down at once), or nil if none waits for the daemon.
    /// Disconnecting before that `done` was seen to lose the writes (they were still in the
    /// connection's buffer), leaving a node at a ducked volume that WirePlumber then saved.
    func handBackAdoptedNodes() -> Int32? {
        guard !isShutDown, core != nil else { return nil }
        perform(adoption.giveBackAll())
        // The daemon answers syncs in order: the last one confirms every write before it.
        return adopted.unconfirmed.last?.seq
    }

    /// Throws `accessRefused` when the registry showed that the daemon lets this client only read other
    /// applications' nodes (a sandbox without `Manager`): nothing could be adopted.
    func checkAdoptionAccess() throws(SessionError) {
        if let node = adopted.readOnlyNode {
            throw SessionError(
                code: .accessRefused,
                message: "the PipeWire daemon lets this client only read other applications' nodes (\(node) "
                    + "among them), so it cannot duck another player: the host runs in a sandbox. WirePlumber "
                    + "gives a sandboxed client write access when its media.category is Manager: make the engine "
                    + "with PipeWireEngine(applicationName:remoteName:layout:access: .manager), and give a Flatpak "
                    + "app the PipeWire socket (--filesystem=xdg-run/pipewire-0)")
        }
    }

    /// Starts the watchdog if it is not running (once: a failure is reported once, and adoption works
    /// without it).
    func startAdoptionWatchdog() {
        if adoption.throughLoopbacks {
            // The daemon removes the loopbacks with this process's connections: nothing to keep.
            guard !adopted.carrierReported else { return }
            adopted.carrierReported = true
            let reason = carrierReason ?? "the host asked for it"
            logger.info("adopted nodes are ducked through loopbacks: \(reason)")
            delivery.emit(.throughLoopbacks(reason: reason))
            return
        }
        guard adopted.watchdog == nil, adopted.watchdogFailure == nil else { return }
        let start = ContinuousClock.now
        switch AdoptionWatchdog.start(remoteName: remoteName, mediaCategory: access.mediaCategory) {
        case .success(let started):
            adopted.watchdog = started
            logger.info(
                "adoption watchdog running (pid \(started.processID), started in \(ContinuousClock.now - start))")
            if let reason = SharedFate.current().reason {
                logger.warning("\(reason)")
                delivery.emit(.watchdogSharesFate(reason: reason))
            }
        case .failure(let error):
            adopted.watchdogFailure = error
            logger.error("\(error.message)")
            delivery.emit(.watchdogUnavailable(reason: error.message))
        }
    }

    /// The loop was woken: the controls' latest gains and pauses, and the engine's suspension.
    func takeCommands() {
        var commands: [StreamID: AdoptionMachine.Command] = [:]
        for (id, control) in adopted.controls { commands[id] = control.take() }
        let suspended = shared.suspended.load(ordering: .relaxed)
        perform(adoption.commands(commands, suspended: suspended, at: .now, quantum: currentQuantum))
        reschedule()
    }

    /// The adoption's part of the housekeeping: ramp steps, settle writes, waits run out.
    func adoptionHousekeeping(at now: ContinuousClock.Instant) {
        perform(adoption.tick(at: now, quantum: currentQuantum))
        loopbacks.housekeeping(at: now)
    }

    /// When the adoption next needs the timer.
    func adoptionDue(after now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        [adoption.nextDue(after: now, quantum: currentQuantum), loopbacks.nextDue].compactMap { $0 }.min()
    }

    /// The connection is going away: every proxy is destroyed (before the core is), every node released.
    /// When the daemon is still there (the engine shuts down), a node whose give-back it has not
    /// confirmed stays the watchdog's: the write may go with the connection, and the watchdog, stopped
    /// next, gives the node back itself.
    func adoptionDisconnected() {
        adopted.readOnlyNode = nil
        perform(adoption.disconnected())
        adopted.unconfirmed.removeAll()
        adopted.unwritten.removeAll()
        loopbacks.disconnected()
        adopted.destroyProxies()
        adopted.registry = nil
    }

    /// The engine is going away: the watchdog stops (giving back any node whose give-back the daemon
    /// has not confirmed: the engine's shutdown waited for it at most 500 ms).
    func adoptionShutdown() {
        for control in adopted.controls.values { control.detach() }
        adopted.controls.removeAll()
        adopted.watchdog?.stop()
        adopted.watchdog = nil
        adoptionDisconnected()
    }

    /// The daemon confirmed the sync `seq`: the nodes given back before it are the watchdog's no more.
    func giveBackConfirmed(upTo seq: Int32) {
        while let first = adopted.unconfirmed.first, first.seq <= seq {
            adopted.unconfirmed.removeFirst()
            for node in first.nodes { adopted.watchdog?.released(node) }
        }
    }

    /// The quantum the engine's streams last ran at (0 before the first).
    private var currentQuantum: Int { shared.quantum.load(ordering: .relaxed) }

    // MARK: Performing

    /// Performs the machine's actions in order. Returns the sequence number of the sync that confirms a
    /// give-back among them, if one was sent.
    @discardableResult
    func perform(_ actions: [AdoptionMachine.Action]) -> Int32? {
        var confirming: Int32?
        // The nodes whose soft volumes were to be written and were not.
        var unwritten: Set<UInt32> = []
        for action in actions {
            switch action {
            case .bindClient(let id):
                guard let registry = adopted.registry, adopted.clientProxies[id] == nil else { continue }
                adopted.clientProxies[id] = ForeignClientProxy(registry: registry, id: id, observer: self)
            case .bindNode(let id):
                guard let registry = adopted.registry, adopted.nodeProxies[id] == nil else { continue }
                adopted.nodeProxies[id] = ForeignNodeProxy(registry: registry, id: id, observer: self)
            case .unbind(let id):
                loopbacks.forget(id)
                adopted.unwritten.remove(id)
                adopted.nodeProxies.removeValue(forKey: id)?.destroy()
                adopted.clientProxies.removeValue(forKey: id)?.destroy()
            case .route(let node, let stream, let name):
                let result = loopbacks.route(node, name: name)
                if result < 0 {
                    delivery.emit(
                        .writeFailed(
                            stream: stream, node: node,
                            reason: "cannot load \(LoopbackDucks.moduleName) (Debian's libpipewire-0.3-modules): "
                                + String(cString: CPipeWireShim_strerror(result))))
                }
            case .unroute(let node):
                loopbacks.unroute(node, at: .now)
            case .write(let node, _, let soft) where adoption.throughLoopbacks:
                _ = loopbacks.write(node, gain: soft)
            case .write(let node, let stream, let soft):
                guard let proxy = adopted.nodeProxies[node] else {
                    unwritten.insert(node)
                    continue
                }
                let result = proxy.write(soft: soft)
                if result < 0 {
                    unwritten.insert(node)
                    delivery.emit(
                        .writeFailed(
                            stream: stream, node: node, reason: String(cString: CPipeWireShim_strerror(result))))
                }
            case .confirmGiveBack(let nodes):
                // A give-back whose write was not made is no give-back: the watchdog keeps the node.
                let written = nodes.filter { !unwritten.contains($0) }
                for node in nodes where unwritten.contains(node) {
                    adopted.unwritten.insert(node)
                    logger.error("node \(node) could not be given back; the adoption watchdog keeps it")
                }
                if let seq = connection.sync() {
                    adopted.unconfirmed.append((seq, written))
                    confirming = seq
                } else {
                    for node in written { adopted.watchdog?.released(node) }
                }
            case .watchdogAdopted(let node):
                if let watchdog = adopted.watchdog, watchdog.adopted(node) < 0 {
                    logger.error("the adoption watchdog was not told of node \(node): it would not give it back")
                }
            case .watchdogReleased(let node):
                adopted.watchdog?.released(node)
            case .watchdogReleasedAll:
                // Leaving a daemon that is still there (the shutdown), not a broken connection.
                let leaving = isShutDown && core != nil
                adopted.watchdog?.releaseAll(keeping: leaving ? adopted.awaitingGiveBack : [])
            case .emit(let event):
                log(event)
                delivery.emit(event)
            case .report(let event):
                delivery.emit(event)
            case .otherAudio(let id, let mediaClass, let name):
                for event in graph.nodeAdded(id: id, mediaClass: mediaClass, name: name) { delivery.emit(event) }
            case .adoptedByGraph(let id):
                for event in graph.nodeAdopted(id: id) { delivery.emit(event) }
            case .log(let message):
                logger.warning("\(message)")
            }
        }
        return confirming
    }

    private func log(_ event: AdoptionEvent) {
        switch event {
        case .adopted, .userVolume: logger.info("\(event)")
        default: break
        }
    }
}

extension EngineCore: ForeignProxyObserver {
    func foreignNode(_ id: UInt32, info properties: [String: String]?, running: Bool) {
        perform(adoption.nodeInfo(id, properties: properties, running: running, at: .now))
        reschedule()
    }

    func foreignNode(_ id: UInt32, volumes: [Float], soft: Float?, mute: Bool) {
        perform(adoption.volumes(id, channel: volumes, soft: soft, at: .now))
    }

    func foreignClient(_ id: UInt32, info properties: [String: String]) {
        perform(adoption.clientInfo(id, properties: properties, at: .now))
        reschedule()
    }
}

/// The control side of an adopted stream: the session's gains and pauses, handed to the loop thread
/// through a mutex and the engine's ``LoopSignal``, so a call never waits for the loop.
final class AdoptedNodeControl: StreamControl {
    private struct State {
        var command = AdoptionMachine.Command()
        var detached = false
    }

    private let state = Locked(State())
    private let wake: LoopSignal

    init(wake: LoopSignal) {
        self.wake = wake
    }

    func setGain(_ gain: Float, ramp: Duration) {
        send { command in
            command.gain = gain
            command.ramp = ramp
        }
    }

    func setPaused(_ paused: Bool) {
        send { $0.paused = paused }
    }

    /// An adopted node's audio never passes through this process: nothing to measure.
    func activityMeter() -> ActivityMeter? { nil }

    /// A voice-activity duck follows meters per sample on the render side, which an adopted node does
    /// not have: the node keeps the gain the session sets (a plain duck works; see ``NodeAdoption``).
    func setActivityDuck(gain: Float, following meters: [ActivityMeter], attack: Duration, release: Duration) {}

    /// The latest command, taken (loop thread).
    func take() -> AdoptionMachine.Command? {
        state.withLock { state in
            defer { state.command = AdoptionMachine.Command() }
            return state.command == AdoptionMachine.Command() ? nil : state.command
        }
    }

    /// The stream is closed: calls do nothing any more.
    func detach() {
        state.withLock { $0.detached = true }
    }

    private func send(_ change: (inout AdoptionMachine.Command) -> Void) {
        let sent = state.withLock { state in
            guard !state.detached else { return false }
            change(&state.command)
            return true
        }
        if sent { wake.signal() }
    }
}
