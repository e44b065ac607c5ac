internal import CPipeWire
internal import CPipeWireShim
import Dispatch
import SharedSession

/// The engine's adopted nodes (see ``NodeAdoption``): the foreign nodes and clients it binds from the
/// registry, the session streams made of adoption rules, and the gain ramps it writes to their nodes'
/// `Props`, one step per quantum, from the loop thread. Loop thread (or the loop lock held) only.
///
/// The session's gain reaches a node through its `Props` `softVolumes`: PipeWire's audioconvert plays a
/// node at its `volume` times its soft volumes once they are written, instead of its `channelVolumes`.
/// The channel volumes stay the user's: what a desktop mixer and the player itself (mpv's `ao-volume`)
/// show, what a user sets, and what WirePlumber saves and gives to the next stream with the same key;
/// the soft volumes are neither shown nor saved, so a ducked volume never reaches WirePlumber's state,
/// even when a player closes its node in the middle of a duck. Giving a node back is setting its soft
/// volumes to its channel volumes: at once (closing the stream, the engine's shutdown) or from the
/// ``AdoptionWatchdog`` (this process dying). A user's write of the channel volumes makes audioconvert
/// use them again: the engine takes it as the stream's new volume and writes its soft volumes at once.
final class AdoptionCore {
    /// A session stream made of an adoption rule.
    struct Member {
        let control: AdoptedNodeControl
        let source: AdoptedNodeSource
        /// The gain the nodes are at (or were last written, mid-ramp); what a new node is given.
        var gain: Float
        var target: Float
        var ramp: NodeVolumeRamp?
        var paused: Bool
        /// Whether the engine is suspended (an interruption, the background): silent like a pause, with
        /// no event for the host.
        var suspended = false
    }

    /// One adopted node's write bookkeeping.
    struct Bound {
        let stream: StreamID
        let name: String
        /// Our writes of the node's soft volumes, to tell them from another program's.
        var echoes = VolumeEchoes()
        /// The user's volume: the mean of the node's `channelVolumes`, as last reported; nil until the
        /// node's first `Props` since it was bound.
        var user: Float?
        /// When the registry announced the node.
        let appeared: ContinuousClock.Instant
        /// How many of ``settleWrites`` were made.
        var settled = 0

        /// When the next settle write is due, if one is left.
        var nextSettle: ContinuousClock.Instant? {
            settled < AdoptionCore.settleWrites.count ? appeared + AdoptionCore.settleWrites[settled] : nil
        }
    }

    /// When, after a node appeared, its soft volumes are written again: WirePlumber restores a saved
    /// `channelVolumes` on a new node (within ``StreamHealth/restoreWindow``), and any write of the
    /// channel volumes, even of the value they have, makes PipeWire play the node at them instead of
    /// the soft volumes, with nothing in the node's reported `Props` to show it.
    static let settleWrites: [Duration] = [.milliseconds(50), .milliseconds(250), StreamHealth.restoreWindow]

    /// How long a pause fades the adopted main's node out to silence, and a resume fades it in.
    static let pauseFade = Duration.milliseconds(100)

    private unowned let engine: EngineCore
    private let loop: UnsafeMutablePointer<pw_loop>
    let delivery: AdoptionDelivery
    private(set) var book: AdoptionBook
    private var members: [StreamID: Member] = [:]
    private var bound: [UInt32: Bound] = [:]
    private var nodeProxies: [UInt32: ForeignNodeProxy] = [:]
    private var clientProxies: [UInt32: ForeignClientProxy] = [:]
    /// When the registry announced each node, for the adoption latency.
    private var appeared: [UInt32: ContinuousClock.Instant] = [:]
    /// When each node was first seen running.
    private var firstRunning: [UInt32: ContinuousClock.Instant] = [:]
    /// The last channel volume (the user's) each known node reported before it was bound.
    private var reported: [UInt32: Float] = [:]
    /// The process that gives the nodes back if this one dies; started with the first adoption.
    private var watchdog: AdoptionWatchdog?
    /// Nodes given back whose write the daemon has not confirmed yet, by the sync that will: the
    /// watchdog keeps them until then, so a process that exits right after a close still gives them
    /// back (the write may still be in the connection's buffer when the process goes).
    private var unconfirmed: [(seq: Int32, nodes: [UInt32])] = []
    private var watchdogFailure: SessionError?
    private let remoteName: String?
    /// Own nodes already reported as matching a rule.
    private var ownReported: Set<String> = []
    private var timer: LoopTimer?
    private var wake: UnsafeMutablePointer<spa_source>?
    /// The registry of the connection, while connected: proxies are bound from it.
    private var registry: OpaquePointer?
    /// The clients the registry announced, bound once something is adopted.
    private var knownClients: Set<UInt32> = []
    /// Other clients' playback nodes not counted as other audio yet: while something is adopted, a new
    /// node is other audio only once its properties show no rule adopts it.
    private var undecided: [UInt32: (mediaClass: String, name: String)] = [:]
    /// The clients whose info (their full properties) arrived.
    private var clientsWithInfo: Set<UInt32> = []
    /// Wakes the loop to take the controls' commands and the engine's suspension; any thread.
    let signal = LoopSignal()

    init(engine: EngineCore, loop: UnsafeMutablePointer<pw_loop>, ownPrefix: String, remoteName: String?) {
        self.engine = engine
        self.loop = loop
        self.remoteName = remoteName
        delivery = AdoptionDelivery()
        book = AdoptionBook(ownProcessID: getpid(), ownPrefix: ownPrefix, ancestors: ProcessTree.ancestors(of:))
    }

    /// Adds the timer and the event source: on the loop thread, when the engine starts.
    func start() {
        guard timer == nil else { return }
        timer = LoopTimer(loop: loop) { [unowned self] in self.step() }
        wake = CPipeWireShim_loopAddEvent(
            loop,
            { data, _ in
                guard let data else { return }
                Unmanaged<AdoptionCore>.fromOpaque(data).takeUnretainedValue().takeCommands()
            }, Unmanaged.passUnretained(self).toOpaque())
        signal.attach(loop: loop, source: wake)
    }

    // MARK: Streams

    /// Opens a session stream made of `source`'s rule: binds every known node that matches.
    func open(_ id: StreamID, source: AdoptedNodeSource, gain: Float, paused: Bool) -> AdoptedNodeControl {
        startWatchdog()
        let control = AdoptedNodeControl(signal: signal)
        members[id] = Member(control: control, source: source, gain: paused ? 0 : gain, target: gain, paused: paused)
        handle(book.adopt(id, rule: source.rule, at: .now))
        bindProxies()
        reschedule()
        return control
    }

    /// Closes the stream if it is an adopted one: its nodes get their own volume back at once (their
    /// channel volumes, the user's, were never written). Returns false for a stream of another kind.
    func close(_ id: StreamID) -> Bool {
        guard let member = members.removeValue(forKey: id) else { return false }
        member.control.detach()
        if book.adoptions[id]?.playing == true { delivery.emit(.playing(stream: id, false)) }
        handBack(book.release(id).sorted())
        reschedule()
        return true
    }

    /// Gives `nodes` their channel volumes (the user's) back as their soft volumes and forgets them;
    /// the watchdog forgets them once the daemon confirms the writes. Returns the confirming sync's
    /// sequence number, or nil if nothing was written.
    @discardableResult
    private func handBack(_ nodes: [UInt32]) -> Int32? {
        var given: [UInt32] = []
        for node in nodes {
            guard let entry = bound.removeValue(forKey: node) else { continue }
            _ = nodeProxies[node]?.write(soft: entry.user ?? reported[node] ?? 1)
            given.append(node)
        }
        guard !given.isEmpty, let seq = engine.connection.sync() else {
            for node in given { watchdog?.released(node) }
            return nil
        }
        unconfirmed.append((seq, given))
        return seq
    }

    /// Gives every adopted node back (the engine is shutting down). Returns the sequence number of the
    /// sync that confirms the writes, or nil if nothing was written.
    func handBackAll() -> Int32? {
        handBack(bound.keys.sorted())
    }

    /// The daemon confirmed the sync `seq`: the nodes given back before it are the watchdog's no more.
    func confirmed(upTo seq: Int32) {
        while let first = unconfirmed.first, first.seq <= seq {
            unconfirmed.removeFirst()
            for node in first.nodes { watchdog?.released(node) }
        }
    }

    /// Starts the watchdog if it is not running (once: a failure is reported once, and adoption works
    /// without it).
    func startWatchdog() {
        guard watchdog == nil, watchdogFailure == nil else { return }
        let start = ContinuousClock.now
        switch AdoptionWatchdog.start(remoteName: remoteName) {
        case .success(let started):
            watchdog = started
            engine.logger.info(
                "adoption watchdog running (pid \(started.processID), started in \(ContinuousClock.now - start))")
        case .failure(let error):
            watchdogFailure = error
            engine.logger.error("\(error.message)")
            delivery.emit(.watchdogUnavailable(reason: error.message))
        }
    }

    /// The watchdog's process id, while it runs (tests).
    var watchdogProcessID: pid_t? { watchdog?.processID }

    /// Whether the engine adopts for `id`.
    func adopts(_ id: StreamID) -> Bool { members[id] != nil }

    // MARK: The registry

    /// A node or client appeared. It is remembered; it is bound (its info and `Props` followed) only
    /// while the engine adopts something, so an engine that adopts nothing costs the daemon nothing more.
    func globalAdded(id: UInt32, type: String, properties: [String: String], registry: OpaquePointer) {
        self.registry = registry
        if type == String(cString: CPipeWireShim_typeClient) {
            knownClients.insert(id)
            handle(book.client(id, properties: properties))
        } else if type == String(cString: CPipeWireShim_typeNode),
            let mediaClass = properties["media.class"], AdoptionBook.isAdoptable(mediaClass: mediaClass)
        {
            // The engine's own nodes too: a rule that matches one is reported (and the node left alone).
            appeared[id] = .now
            book.nodeAppeared(id, properties: properties)
        } else {
            return
        }
        if !members.isEmpty { bindProxies() }
    }

    /// Whether a node the registry just announced waits for its properties before it counts as other
    /// audio (see ``decided(_:)``): while something is adopted, for other clients' playback nodes.
    func defersOtherAudio(id: UInt32, mediaClass: String, name: String) -> Bool {
        guard !members.isEmpty, AdoptionBook.isAdoptable(mediaClass: mediaClass), !name.hasPrefix(book.ownPrefix)
        else { return false }
        undecided[id] = (mediaClass, name)
        return true
    }

    /// A deferred node's properties arrived: adopted, it never was other audio; otherwise it is now.
    private func decided(_ id: UInt32) {
        guard let known = book.nodes[id], known.hasInfo,
            known.clientID.map({ clientsWithInfo.contains($0) }) ?? true,
            let node = undecided.removeValue(forKey: id), book.stream(boundTo: id) == nil
        else { return }
        for event in engine.graph.nodeAdded(id: id, mediaClass: node.mediaClass, name: node.name) {
            engine.delivery.emit(event)
        }
    }

    /// Binds every known client and adoptable node not bound yet.
    private func bindProxies() {
        guard let registry else { return }
        for id in knownClients.sorted() where clientProxies[id] == nil {
            clientProxies[id] = ForeignClientProxy(registry: registry, id: id, observer: self)
        }
        for id in book.nodes.keys.sorted() where nodeProxies[id] == nil {
            nodeProxies[id] = ForeignNodeProxy(registry: registry, id: id, observer: self)
        }
    }

    func globalRemoved(id: UInt32) {
        if bound[id] != nil { watchdog?.released(id) }
        let wasRamping = bound[id].map { members[$0.stream]?.ramp != nil } ?? false
        let name = bound[id]?.name
        let changes = book.removed(id)
        for change in changes {
            if case .unbound(let stream, let node) = change {
                delivery.emit(.released(stream: stream, node: node, name: name ?? "node \(node)", midRamp: wasRamping))
            }
        }
        bound[id] = nil
        handle(changes.filter { if case .unbound = $0 { false } else { true } })
        nodeProxies.removeValue(forKey: id)?.destroy()
        clientProxies.removeValue(forKey: id)?.destroy()
        knownClients.remove(id)
        clientsWithInfo.remove(id)
        undecided[id] = nil
        appeared[id] = nil
        firstRunning[id] = nil
        reported[id] = nil
        reschedule()
    }

    /// The connection is going away: every proxy is destroyed (before the core is), every node released.
    func disconnected() {
        for change in book.disconnected() {
            switch change {
            case .unbound(let stream, let node):
                delivery.emit(
                    .released(stream: stream, node: node, name: bound[node]?.name ?? "node \(node)", midRamp: false))
            case .playing(let stream, let playing):
                delivery.emit(.playing(stream: stream, playing))
            default:
                break
            }
        }
        bound.removeAll()
        unconfirmed.removeAll()
        watchdog?.releaseAll()
        for proxy in nodeProxies.values { proxy.destroy() }
        for proxy in clientProxies.values { proxy.destroy() }
        nodeProxies.removeAll()
        clientProxies.removeAll()
        appeared.removeAll()
        firstRunning.removeAll()
        reported.removeAll()
        knownClients.removeAll()
        undecided.removeAll()
        clientsWithInfo.removeAll()
        registry = nil
    }

    func shutdown() {
        for member in members.values { member.control.detach() }
        // Stopped before the nodes are forgotten: it gives back any node whose give-back the daemon has
        // not confirmed (the engine's shutdown waited for it at most 500 ms).
        watchdog?.stop()
        watchdog = nil
        disconnected()
        members.removeAll()
        timer?.destroy()
        timer = nil
        signal.detach()
        if let wake { CPipeWireShim_loopDestroySource(loop, wake) }
        wake = nil
    }

    // MARK: Changes

    private func handle(_ changes: [AdoptionBook.Change]) {
        for change in changes {
            switch change {
            case .bound(let stream, let node):
                bind(node, to: stream)
            case .unbound(let stream, let node):
                bound[node] = nil
                delivery.emit(.released(stream: stream, node: node, name: "node \(node)", midRamp: false))
            case .ownNodeSkipped(let stream, _, let name):
                if ownReported.insert("\(stream)/\(name)").inserted {
                    delivery.emit(.matchesOwnNode(stream: stream, name: name))
                }
            case .playing(let stream, let playing):
                delivery.emit(.playing(stream: stream, playing))
            }
        }
    }

    private func bind(_ node: UInt32, to stream: StreamID) {
        guard let member = members[stream], nodeProxies[node] != nil else { return }
        let name = book.info(node)?.displayName ?? "node \(node)"
        bound[node] = Bound(stream: stream, name: name, user: reported[node], appeared: appeared[node] ?? .now)
        for event in engine.graph.nodeAdopted(id: node) { engine.delivery.emit(event) }
        // The watchdog first: from the write on, the node is ours to give back.
        if let watchdog, watchdog.adopted(node) < 0 {
            engine.logger.error("the adoption watchdog was not told of node \(node): it would not give it back")
        }
        write(member.gain, to: node)
        let latency = appeared[node].map { ContinuousClock.now - $0 } ?? .zero
        engine.logger.info("\(stream) adopted node \(node) (\(name)) \(latency) after it appeared")
        delivery.emit(.adopted(stream: stream, node: node, name: name, latency: latency))
    }

    /// Writes `node`'s soft volumes: the session's gain.
    private func write(_ gain: Float, to node: UInt32) {
        guard let entry = bound[node], let proxy = nodeProxies[node] else { return }
        bound[node]?.echoes.wrote(gain, at: .now)
        let result = proxy.write(soft: gain)
        if result < 0 {
            delivery.emit(
                .writeFailed(stream: entry.stream, node: node, reason: String(cString: CPipeWireShim_strerror(result))))
        }
    }

    private func writeAll(_ stream: StreamID, _ gain: Float) {
        for (id, entry) in bound where entry.stream == stream { write(gain, to: id) }
    }

    // MARK: Ramps

    /// Takes the controls' latest gains and pauses (on the loop thread, after a control's signal).
    private func takeCommands() {
        let now = ContinuousClock.now
        let suspended = engine.shared.suspended.load(ordering: .relaxed)
        for id in members.keys.sorted() {
            guard var member = members[id] else { continue }
            let command = member.control.take() ?? AdoptedNodeControl.Command()
            let wasSilent = member.paused || member.suspended
            if let paused = command.paused, paused != member.paused {
                member.paused = paused
                delivery.emit(.pauseRequested(stream: id, paused))
            }
            member.suspended = suspended
            if let gain = command.gain { member.target = gain.gain }
            let silent = member.paused || member.suspended
            if silent != wasSilent {
                let to: Float = silent ? 0 : member.target
                member.ramp = NodeVolumeRamp(from: member.gain, to: to, start: now, duration: Self.pauseFade)
            } else if let gain = command.gain, !silent {
                member.ramp = NodeVolumeRamp(from: member.gain, to: gain.gain, start: now, duration: gain.ramp)
            }
            members[id] = member
        }
        step()
    }

    /// Writes each ramp's next step.
    private func step() {
        let now = ContinuousClock.now
        for id in members.keys.sorted() {
            guard var member = members[id] else { continue }
            if let ramp = member.ramp {
                // Never more than one step of the schedule per write: a timer the loaded machine fired
                // late makes the ramp longer, not its step bigger.
                let steps = NodeVolumeRamp.steps(duration: ramp.duration, quantum: stepFrames)
                let gain = ramp.gain(at: now, after: member.gain, steps: steps)
                let finished = gain == ramp.to
                if gain != member.gain || finished {
                    member.gain = gain
                    writeAll(id, gain)
                }
                if finished { member.ramp = nil }
            }
            members[id] = member
        }
        for (node, entry) in bound.sorted(by: { $0.key < $1.key }) {
            guard let due = entry.nextSettle, due <= now, let member = members[entry.stream] else { continue }
            bound[node]?.settled += 1
            write(member.gain, to: node)
        }
        for (stream, rule, after) in book.overdue(at: now) {
            delivery.emit(.matchedNothing(stream: stream, rule: rule, after: after))
        }
        reschedule()
    }

    /// The time between two steps: the quantum the engine's streams last ran at, else PipeWire's
    /// default of 1024 frames.
    private var stepPeriod: Duration {
        .nanoseconds(Int64(stepFrames) * 1_000_000_000 / 48_000)
    }

    private var stepFrames: Int {
        let quantum = engine.shared.quantum.load(ordering: .relaxed)
        return quantum > 0 ? quantum : 1024
    }

    private func reschedule() {
        guard let timer else { return }
        var due: [ContinuousClock.Instant] = []
        if members.values.contains(where: { $0.ramp != nil }) { due.append(.now + stepPeriod) }
        if let settle = bound.values.compactMap(\.nextSettle).min() { due.append(settle) }
        if let wait = book.nextWaitDeadline { due.append(wait) }
        timer.arm(for: due.min())
    }
}

extension AdoptionCore: ForeignProxyObserver {
    func foreignNode(_ id: UInt32, info properties: [String: String]?, running: Bool) {
        if running, firstRunning[id] == nil { firstRunning[id] = .now }
        handle(book.nodeInfo(id, properties: properties, running: running))
        decided(id)
        reschedule()
    }

    func foreignNode(_ id: UInt32, volumes: [Float], soft: Float?, mute: Bool) {
        let user = volumes.reduce(0, +) / Float(max(volumes.count, 1))
        guard var entry = bound[id] else {
            reported[id] = user
            return
        }
        guard let known = entry.user else {
            // The first report since it was bound: the user's volume as it was before the adoption.
            entry.user = user
            bound[id] = entry
            return
        }
        if let soft, entry.echoes.report(volume: soft, at: .now) != .own, let member = members[entry.stream] {
            // Another program wrote the soft volumes (another ducking host): ours are written again.
            engine.logger.warning("\(entry.name): soft volumes \(soft) written from outside; writing ours again")
            bound[id] = entry
            write(member.gain, to: id)
            entry = bound[id] ?? entry
        }
        guard abs(user - known) > Self.userVolumeTolerance, let member = members[entry.stream] else {
            bound[id] = entry
            return
        }
        // Someone set the channel volumes: PipeWire plays the node at them now, until our soft volumes are
        // written again, at once, at the gain the node had.
        entry.user = user
        bound[id] = entry
        write(member.gain, to: id)
        if isRestore(id, appeared: entry.appeared) { return }
        // A user (a mixer, `wpctl set-volume`): the new volume is the stream's volume. The session takes
        // it as the host's volume and sends the gain (under any duck) that follows.
        engine.logger.info("\(entry.name): volume \(user) set from outside")
        delivery.emit(.userVolume(stream: entry.stream, node: id, volume: user))
        engine.delivery.emit(.externalVolumeChange(stream: entry.stream, volume: min(max(user, 0), 1)))
    }

    /// Whether a change of `node`'s channel volumes now is the session manager restoring the user's saved
    /// volume (nothing to report) rather than the user: WirePlumber does it as the node appears, before
    /// it is linked, so a change within ``StreamHealth/restoreWindow`` of its appearing and before it
    /// has run for ``restoreAfterRunning``.
    private func isRestore(_ node: UInt32, appeared: ContinuousClock.Instant) -> Bool {
        let now = ContinuousClock.now
        guard now - appeared < StreamHealth.restoreWindow else { return false }
        return firstRunning[node].map { now - $0 < Self.restoreAfterRunning } ?? true
    }

    static let restoreAfterRunning = Duration.milliseconds(50)

    /// How far a reported channel volume may be from the known one and still be the same (a float's
    /// round trip through the daemon is exact; this is margin).
    static let userVolumeTolerance: Float = 1e-5

    func foreignClient(_ id: UInt32, info properties: [String: String]) {
        clientsWithInfo.insert(id)
        handle(book.client(id, properties: properties))
        for node in book.nodes.filter({ $0.value.clientID == id }).keys.sorted() { decided(node) }
    }
}

/// The control side of an adopted stream: the session's gains and pauses, handed to the loop thread
/// through a mutex and the adoption's ``LoopSignal``, so a call never waits for the loop.
final class AdoptedNodeControl: StreamControl {
    struct Command {
        var gain: (gain: Float, ramp: Duration)?
        var paused: Bool?
    }

    private struct State {
        var command = Command()
        var detached = false
    }

    private let state = Locked(State())
    private let signal: LoopSignal

    init(signal: LoopSignal) {
        self.signal = signal
    }

    func setGain(_ gain: Float, ramp: Duration) {
        send { $0.gain = (gain, ramp) }
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
    func take() -> Command? {
        state.withLock { state in
            defer { state.command = Command() }
            return state.command.gain == nil && state.command.paused == nil ? nil : state.command
        }
    }

    /// The stream is closed: calls do nothing any more.
    func detach() {
        state.withLock { $0.detached = true }
    }

    private func send(_ change: (inout Command) -> Void) {
        let sent = state.withLock { state in
            guard !state.detached else { return false }
            change(&state.command)
            return true
        }
        if sent { signal.signal() }
    }
}

/// Wakes the engine's loop to run the adoption's event (a write to an eventfd), from any thread: the
/// controls' commands, the engine's suspension.
final class LoopSignal: Sendable {
    /// The loop and its event source, as addresses: nil before the engine starts and after it stops.
    private let target = Locked<(loop: UInt, source: UInt)?>(nil)

    func attach(loop: UnsafeMutablePointer<pw_loop>, source: UnsafeMutablePointer<spa_source>?) {
        target.withLock { $0 = source.map { (UInt(bitPattern: loop), UInt(bitPattern: $0)) } }
    }

    func detach() {
        target.withLock { $0 = nil }
    }

    func signal() {
        target.withLock { target in
            guard let target, let loop = UnsafeMutablePointer<pw_loop>(bitPattern: target.loop),
                let source = UnsafeMutablePointer<spa_source>(bitPattern: target.source)
            else { return }
            // Under the mutex, so `detach()` (before the source is destroyed) cannot come between.
            _ = CPipeWireShim_loopSignalEvent(loop, source)
        }
    }
}

/// Adoption events to the ``NodeAdoption``'s handler, on a serial queue of their own.
final class AdoptionDelivery: Sendable {
    private let queue = DispatchQueue(label: "SharedSession.PipeWire.adoption")
    private let handler = Locked<(@Sendable (AdoptionEvent) -> Void)?>(nil)

    func setHandler(_ handler: (@Sendable (AdoptionEvent) -> Void)?) {
        self.handler.withLock { $0 = handler }
    }

    func emit(_ event: AdoptionEvent) {
        queue.async {
            let current = self.handler.withLock { $0 }
            current?(event)
        }
    }

    func drain() { queue.sync {} }
}

/// Parent processes, from `/proc/PID/stat`.
enum ProcessTree {
    /// The parent of `pid`, its parent and so on, up to (not including) 1; empty if unknown.
    static func ancestors(of pid: Int32) -> [Int32] {
        var result: [Int32] = []
        var current = pid
        while result.count < 64, let parent = parent(of: current), parent > 1 {
            result.append(parent)
            current = parent
        }
        return result
    }

    /// The file name of the executable of `pid` (what `application.process.binary` holds).
    static func binary(of pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/").last.map(String.init)
    }

    static func parent(of pid: Int32) -> Int32? {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ')' ends it.
        guard let close = line.lastIndex(of: ")") else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
