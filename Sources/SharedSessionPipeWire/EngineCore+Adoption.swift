internal import CPipeWire
internal import CPipeWireShim
import Dispatch
import SharedSession

/// The engine's adopted nodes (see ``NodeAdoption``): the foreign nodes and clients it binds from the
/// registry, the session streams made of adoption rules, and the gain ramps it writes to their nodes'
/// `Props`, one step per quantum, from the loop thread. Loop thread (or the loop lock held) only.
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
        /// Whether the nodes were muted by a pause.
        var muted: Bool
    }

    /// One adopted node's write bookkeeping.
    struct Bound {
        let stream: StreamID
        let name: String
        var echoes = VolumeEchoes()
        /// Set once a report of our own write came back: reports before it are the node's old state.
        var settled = false
    }

    /// How long a pause fades the adopted main's node out (then mutes it), and a resume fades it in.
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
    /// The last volume each known node reported, to give it back when its adoption ends.
    private var reported: [UInt32: Float] = [:]
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

    init(engine: EngineCore, loop: UnsafeMutablePointer<pw_loop>, ownPrefix: String) {
        self.engine = engine
        self.loop = loop
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
        let control = AdoptedNodeControl(signal: signal)
        members[id] = Member(
            control: control, source: source, gain: paused ? 0 : gain, target: gain, paused: paused, muted: paused)
        handle(book.adopt(id, rule: source.rule, at: .now))
        bindProxies()
        reschedule()
        return control
    }

    /// Closes the stream if it is an adopted one: its nodes get their own volume back (the user's if
    /// they set one) and are unmuted. Returns false for a stream of another kind.
    func close(_ id: StreamID) -> Bool {
        guard let member = members.removeValue(forKey: id) else { return false }
        member.control.detach()
        if book.adoptions[id]?.playing == true { delivery.emit(.playing(stream: id, false)) }
        for node in book.release(id).sorted() {
            bound[node] = nil
            _ = nodeProxies[node]?.write(volume: reported[node] ?? 1, mute: member.muted ? false : nil)
        }
        reschedule()
        return true
    }

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
        for proxy in nodeProxies.values { proxy.destroy() }
        for proxy in clientProxies.values { proxy.destroy() }
        nodeProxies.removeAll()
        clientProxies.removeAll()
        appeared.removeAll()
        reported.removeAll()
        knownClients.removeAll()
        undecided.removeAll()
        clientsWithInfo.removeAll()
        registry = nil
    }

    func shutdown() {
        for member in members.values { member.control.detach() }
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
        guard let member = members[stream], let proxy = nodeProxies[node] else { return }
        let name = book.info(node)?.displayName ?? "node \(node)"
        bound[node] = Bound(stream: stream, name: name)
        for event in engine.graph.nodeAdopted(id: node) { engine.delivery.emit(event) }
        write(member.gain, mute: member.muted ? true : nil, to: proxy, stream: stream)
        let latency = appeared[node].map { ContinuousClock.now - $0 } ?? .zero
        engine.logger.info("\(stream) adopted node \(node) (\(name)) \(latency) after it appeared")
        delivery.emit(.adopted(stream: stream, node: node, name: name, latency: latency))
    }

    private func write(_ volume: Float, mute: Bool?, to proxy: ForeignNodeProxy, stream: StreamID) {
        bound[proxy.id]?.echoes.wrote(volume, at: .now)
        let result = proxy.write(volume: volume, mute: mute)
        if result < 0 {
            delivery.emit(
                .writeFailed(stream: stream, node: proxy.id, reason: String(cString: CPipeWireShim_strerror(result))))
        }
    }

    private func writeAll(_ stream: StreamID, _ volume: Float, mute: Bool?) {
        for (id, entry) in bound where entry.stream == stream {
            if let proxy = nodeProxies[id] { write(volume, mute: mute, to: proxy, stream: stream) }
        }
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
                if !silent, member.muted {
                    // Unmute at silence, then fade in.
                    member.muted = false
                    member.gain = 0
                    writeAll(id, 0, mute: false)
                }
                let to: Float = silent ? 0 : member.target
                member.ramp = NodeVolumeRamp(from: member.gain, to: to, start: now, duration: Self.pauseFade)
            } else if let gain = command.gain, !silent {
                member.ramp = NodeVolumeRamp(from: member.gain, to: gain.gain, start: now, duration: gain.ramp)
            }
            members[id] = member
        }
        step()
    }

    /// Writes each ramp's next step; mutes a main whose pause fade is over.
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
                    let mute: Bool? = finished && (member.paused || member.suspended) && !member.muted ? true : nil
                    if mute == true { member.muted = true }
                    writeAll(id, gain, mute: mute)
                }
                if finished { member.ramp = nil }
            }
            members[id] = member
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
        if let wait = book.nextWaitDeadline { due.append(wait) }
        timer.arm(for: due.min())
    }
}

extension AdoptionCore: ForeignProxyObserver {
    func foreignNode(_ id: UInt32, info properties: [String: String]?, running: Bool) {
        handle(book.nodeInfo(id, properties: properties, running: running))
        decided(id)
        reschedule()
    }

    func foreignNode(_ id: UInt32, volumes: [Float], mute: Bool) {
        let volume = volumes.reduce(0, +) / Float(max(volumes.count, 1))
        guard var entry = bound[id] else {
            reported[id] = volume
            return
        }
        let report = entry.echoes.report(volume: volume, at: .now)
        if report == .own {
            entry.settled = true
            bound[id] = entry
            return
        }
        bound[id] = entry
        guard entry.settled, var member = members[entry.stream] else { return }
        // Someone else set it: it is the stream's volume now. The session takes it as the host's volume
        // and sends the gain (under any duck) that follows; nothing is written back before that.
        member.ramp = nil
        member.gain = volume
        members[entry.stream] = member
        reported[id] = volume
        engine.logger.info("\(entry.name): volume \(volume) set from outside")
        delivery.emit(.userVolume(stream: entry.stream, node: id, volume: volume))
        engine.delivery.emit(.externalVolumeChange(stream: entry.stream, volume: min(max(volume, 0), 1)))
    }

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
