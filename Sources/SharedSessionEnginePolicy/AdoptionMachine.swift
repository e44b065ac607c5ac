package import SharedSession

/// The engine's adopted nodes (see ``NodeAdoption``) as a plain value: the adoption book (which node
/// belongs to which stream), each adopted stream's gain and ramp, each bound node's user volume and
/// write bookkeeping, and which other clients' nodes wait for their properties before they count as
/// other audio. Every input returns the ``Action``s the engine performs, in order, on its loop (the
/// shape of async-http-client's `HTTPConnectionPool.StateMachine`): binding proxies, writing soft
/// volumes, the watchdog's commands, events. It holds no PipeWire object, no clock and no thread;
/// the time is an argument. Tested without a daemon.
///
/// The session's gain reaches a node through its `Props` `softVolumes`: PipeWire's audioconvert plays a
/// node at its `volume` times its soft volumes once they are written, instead of its `channelVolumes`.
/// The channel volumes stay the user's: what a desktop mixer and the player itself (mpv's `ao-volume`)
/// show, what a user sets, and what WirePlumber saves and gives to the next stream with the same key;
/// the soft volumes are neither shown nor saved, so a ducked volume never reaches WirePlumber's state,
/// even when a player closes its node in the middle of a duck. Giving a node back is setting its soft
/// volumes to its channel volumes. A user's write of the channel volumes makes audioconvert use them
/// again: the machine takes it as the stream's new volume and writes the soft volumes again at once.
package struct AdoptionMachine {
    /// What the engine does for an input, in order.
    package enum Action: Equatable {
        /// Bind the client (follow its info) if it is not bound yet.
        case bindClient(UInt32)
        /// Bind the node (follow its info and `Props`) if it is not bound yet.
        case bindNode(UInt32)
        /// Destroy the proxies bound for a global that went away.
        case unbind(UInt32)
        /// Write `node`'s soft volumes (through loopbacks: its loopback's).
        case write(node: UInt32, stream: StreamID, soft: Float)
        /// Through loopbacks: move `node` through a loopback of its own (`name` is the node's, for the
        /// loopback's description), and give it back from it.
        case route(node: UInt32, stream: StreamID, name: String)
        case unroute(UInt32)
        /// The nodes just given back: the watchdog keeps them until the daemon confirms the writes.
        case confirmGiveBack([UInt32])
        /// Tell the watchdog a node is adopted (before the first write) or given back.
        case watchdogAdopted(UInt32)
        case watchdogReleased(UInt32)
        /// The watchdog forgets every node (the connection, and with it the nodes, went away).
        case watchdogReleasedAll
        /// Deliver an event to the ``NodeAdoption``.
        case emit(AdoptionEvent)
        /// Deliver an event to the session.
        case report(EngineEvent)
        /// The graph learns that `id` is another client's playback (other audio), or an adopted node
        /// (not other audio).
        case otherAudio(id: UInt32, mediaClass: String, name: String)
        case adoptedByGraph(UInt32)
        /// Something the engine logs: what happened to a node, from outside.
        case log(String)
    }

    /// When, after a node appeared, its soft volumes are written again: WirePlumber restores a saved
    /// `channelVolumes` on a new node (within ``StreamHealth/restoreWindow``), and any write of the
    /// channel volumes, even of the value they have, makes PipeWire play the node at them instead of
    /// the soft volumes, with nothing in the node's reported `Props` to show it.
    package static let settleWrites: [Duration] = [.milliseconds(50), .milliseconds(250), StreamHealth.restoreWindow]

    /// Through loopbacks: how long after a node was moved to its loopback a stop of the node is taken
    /// as the move's. The session manager relinks it, and on 1.4 the node stops running for a few cycles
    /// (the AdoptingNodes article has the gap): an overlay's duck would be released and taken again.
    package static let moveSettle = Duration.milliseconds(500)

    /// How long a pause fades the adopted main's node out to silence, and a resume fades it in.
    package static let pauseFade = Duration.milliseconds(100)

    /// A change of the channel volumes within ``StreamHealth/restoreWindow`` of the node's appearing
    /// counts as the session manager's restore only until the node has run this long.
    package static let restoreAfterRunning = Duration.milliseconds(50)

    /// How far a reported channel volume may be from the known one and still be the same (a float's
    /// round trip through the daemon is exact; this is margin).
    package static let userVolumeTolerance: Float = 1e-5

    package private(set) var book: AdoptionBook
    /// Whether the session's gain reaches the nodes through loopbacks of the engine's client
    /// (``AdoptionCarrier/loopback``) rather than their soft volumes: nothing of the node is written, so
    /// its volumes are the user's alone, nothing needs writing again and no watchdog keeps it.
    package let throughLoopbacks: Bool
    package private(set) var members: [StreamID: Member] = [:]
    /// The nodes the machine knows, by global id.
    package private(set) var nodes: [UInt32: Node] = [:]
    /// The clients the registry announced, bound once something is adopted, and whether their info
    /// (their full properties) arrived.
    private var clients: [UInt32: Bool] = [:]
    /// Own nodes, and nodes this client may not write, already reported as matching a rule.
    private var ownReported: Set<String> = []

    /// The adopted nodes' bookkeeping, by global id.
    package var bound: [UInt32: Bound] { nodes.compactMapValues(\.bound) }

    package init(book: AdoptionBook, throughLoopbacks: Bool = false) {
        self.book = book
        self.throughLoopbacks = throughLoopbacks
    }

    /// Whether the machine adopts for `stream`.
    package func adopts(_ stream: StreamID) -> Bool { members[stream] != nil }

    // MARK: Streams

    /// Opens a session stream made of `rule`: binds every known client and node, and adopts those that
    /// match.
    package mutating func open(
        _ stream: StreamID, rule: AdoptionRule, ducksWhilePlaying: Bool, gain: Float, paused: Bool,
        at now: ContinuousClock.Instant
    ) -> [Action] {
        members[stream] = Member(
            rule: rule, ducksWhilePlaying: ducksWhilePlaying, gain: paused ? 0 : gain, target: gain, paused: paused)
        return bindAll() + handle(book.adopt(stream, rule: rule, at: now), at: now)
    }

    /// Closes an adopted stream: its nodes get their own volume back at once (their channel volumes,
    /// the user's, were never written).
    package mutating func close(_ stream: StreamID) -> [Action] {
        guard members.removeValue(forKey: stream) != nil else { return [] }
        // The host hears that the stream stopped; the session is not told: closing the stream released
        // the duck it held while it played.
        let stopped: [Action] = book.adoptions[stream]?.playing == true ? [.emit(.playing(stream: stream, false))] : []
        return stopped + giveBack(book.release(stream).sorted())
    }

    /// Gives every adopted node back (the engine is shutting down).
    package mutating func giveBackAll() -> [Action] {
        giveBack(bound.keys.sorted())
    }

    /// Gives `ids` their channel volumes (the user's) back as their soft volumes and forgets their
    /// adoption.
    private mutating func giveBack(_ ids: [UInt32]) -> [Action] {
        var actions: [Action] = []
        var given: [UInt32] = []
        for node in ids {
            guard let entry = nodes[node]?.bound else { continue }
            nodes[node]?.bound = nil
            if throughLoopbacks {
                actions.append(.unroute(node))
            } else {
                actions.append(.write(node: node, stream: entry.stream, soft: entry.user ?? nodes[node]?.reported ?? 1))
            }
            given.append(node)
        }
        return given.isEmpty ? actions : actions + [.confirmGiveBack(given)]
    }

    /// The controls' latest gains and pauses, and whether the engine is suspended.
    package mutating func commands(
        _ commands: [StreamID: Command], suspended: Bool, at now: ContinuousClock.Instant, quantum: Int
    ) -> [Action] {
        var actions: [Action] = []
        for stream in members.keys.sorted() {
            guard var member = members[stream] else { continue }
            let command = commands[stream] ?? Command()
            let wasSilent = member.paused || member.suspended
            if let paused = command.paused, paused != member.paused {
                member.paused = paused
                actions.append(.emit(.pauseRequested(stream: stream, paused)))
            }
            member.suspended = suspended
            if let gain = command.gain { member.target = gain }
            let silent = member.paused || member.suspended
            if silent != wasSilent {
                member.ramp = NodeVolumeRamp(
                    from: member.gain, to: silent ? 0 : member.target, start: now, duration: Self.pauseFade)
            } else if let gain = command.gain, !silent {
                member.ramp = NodeVolumeRamp(from: member.gain, to: gain, start: now, duration: command.ramp)
            }
            members[stream] = member
        }
        return actions + tick(at: now, quantum: quantum)
    }

    /// Writes each ramp's step due at `now` (never more than one step of the schedule per write: a timer
    /// the loaded machine fired late makes the ramp longer, not its step bigger), the settle writes due,
    /// and reports the adoptions that matched nothing in time.
    package mutating func tick(at now: ContinuousClock.Instant, quantum: Int) -> [Action] {
        var actions: [Action] = []
        for stream in members.keys.sorted() {
            guard var member = members[stream], let ramp = member.ramp else { continue }
            let steps = NodeVolumeRamp.steps(duration: ramp.duration, quantum: Self.stepFrames(quantum))
            let gain = ramp.gain(at: now, after: member.gain, steps: steps)
            let finished = gain == ramp.to
            if gain != member.gain || finished {
                member.gain = gain
                for node in nodes.keys.sorted() where nodes[node]?.bound?.stream == stream {
                    actions += write(gain, to: node, at: now)
                }
            }
            if finished { member.ramp = nil }
            members[stream] = member
        }
        for node in nodes.keys.sorted() {
            guard let entry = nodes[node]?.bound, let due = entry.nextSettle, due <= now,
                let member = members[entry.stream]
            else { continue }
            nodes[node]?.bound?.settled += 1
            actions += write(member.gain, to: node, at: now)
        }
        for node in nodes.keys.sorted() {
            guard let entry = nodes[node]?.bound, entry.stopDeferred, let moved = entry.movedAt,
                now - moved >= Self.moveSettle
            else { continue }
            nodes[node]?.bound?.stopDeferred = false
            if nodes[node]?.running == false {
                actions += handle(book.nodeInfo(node, properties: nil, running: false), at: now)
            }
        }
        for (stream, rule, after) in book.overdue(at: now) {
            actions.append(.emit(.matchedNothing(stream: stream, rule: rule, after: after)))
        }
        return actions
    }

    /// When ``tick(at:quantum:)`` is next due: a ramp's next step (one quantum on), a settle write, an
    /// adoption's wait running out; nil if nothing is.
    package func nextDue(after now: ContinuousClock.Instant, quantum: Int) -> ContinuousClock.Instant? {
        var due: [ContinuousClock.Instant] = []
        if members.values.contains(where: { $0.ramp != nil }) {
            due.append(now + AudioFormat.standard.duration(ofFrames: Self.stepFrames(quantum)))
        }
        if let settle = nodes.values.compactMap(\.bound?.nextSettle).min() { due.append(settle) }
        let deferred = nodes.values.compactMap(\.bound).filter(\.stopDeferred).compactMap(\.movedAt)
        if let moved = deferred.min() { due.append(moved + Self.moveSettle) }
        if let wait = book.nextWaitDeadline { due.append(wait) }
        return due.min()
    }

    /// The frames between two ramp steps: the quantum the engine's streams last ran at, else PipeWire's
    /// default of 1024 frames.
    package static func stepFrames(_ quantum: Int) -> Int { quantum > 0 ? quantum : 1024 }

    // MARK: The registry

    /// A node or a client appeared. It is remembered; it is bound (its info and `Props` followed) only
    /// while something is adopted, so an engine that adopts nothing costs the daemon nothing more.
    package mutating func clientAppeared(_ id: UInt32, properties: [String: String], at now: ContinuousClock.Instant)
        -> [Action]
    {
        if clients[id] == nil { clients[id] = false }
        let actions = handle(book.client(id, properties: properties), at: now)
        return members.isEmpty ? actions : actions + bindAll()
    }

    /// An adoptable node appeared (the engine's own too: a rule that matches one is reported, and the
    /// node left alone; so is one this client may not write, `writable` false).
    package mutating func nodeAppeared(
        _ id: UInt32, properties: [String: String], writable: Bool = true, at now: ContinuousClock.Instant
    ) -> [Action] {
        nodes[id, default: Node()].appeared = now
        book.nodeAppeared(id, properties: properties, writable: writable)
        return members.isEmpty ? [] : bindAll()
    }

    /// Whether a node the registry just announced waits for its properties before it counts as other
    /// audio: while something is adopted, for other clients' playback nodes.
    package mutating func defersOtherAudio(id: UInt32, mediaClass: String, name: String) -> Bool {
        guard !members.isEmpty, AdoptionBook.isAdoptable(mediaClass: mediaClass), !name.hasPrefix(book.ownPrefix)
        else { return false }
        nodes[id, default: Node()].undecided = (mediaClass, name)
        return true
    }

    /// A global went away.
    package mutating func removed(_ id: UInt32, at now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        let bound = nodes[id]?.bound
        if bound != nil { actions.append(.watchdogReleased(id)) }
        let midRamp = bound.map { members[$0.stream]?.ramp != nil } ?? false
        let name = bound?.name
        let changes = book.removed(id)
        for change in changes {
            if case .unbound(let stream, let node) = change {
                actions.append(
                    .emit(.released(stream: stream, node: node, name: name ?? "node \(node)", midRamp: midRamp)))
            }
        }
        nodes[id]?.bound = nil
        actions += handle(changes.filter { if case .unbound = $0 { false } else { true } }, at: now)
        actions.append(.unbind(id))
        nodes[id] = nil
        clients[id] = nil
        return actions
    }

    /// The connection is going away: every node is released and forgotten (the engine destroys every
    /// proxy); the adoptions stay, and adopt again once the registry announces matching nodes.
    package mutating func disconnected() -> [Action] {
        var actions: [Action] = []
        for change in book.disconnected() {
            switch change {
            case .unbound(let stream, let node):
                actions.append(
                    .emit(
                        .released(
                            stream: stream, node: node, name: nodes[node]?.bound?.name ?? "node \(node)", midRamp: false
                        )
                    ))
            case .playing(let stream, let playing):
                actions += playingChanged(stream, playing)
            default:
                break
            }
        }
        nodes.removeAll()
        clients.removeAll()
        return actions + [.watchdogReleasedAll]
    }

    // MARK: What bound proxies report

    /// A node's info: its properties (nil if unchanged) and whether it runs.
    package mutating func nodeInfo(
        _ id: UInt32, properties: [String: String]?, running: Bool, at now: ContinuousClock.Instant
    )
        -> [Action]
    {
        if running, nodes[id]?.firstRunning == nil { nodes[id, default: Node()].firstRunning = now }
        nodes[id, default: Node()].running = running
        var seen = running
        if let moved = nodes[id]?.bound?.movedAt {
            if running {
                nodes[id]?.bound?.stopDeferred = false
            } else if now - moved < Self.moveSettle, book.nodes[id]?.running == true {
                nodes[id]?.bound?.stopDeferred = true
                seen = true
            }
        }
        return handle(book.nodeInfo(id, properties: properties, running: seen), at: now) + decide(id)
    }

    /// A client's info (its full properties): its nodes are matched again, and decided.
    package mutating func clientInfo(_ id: UInt32, properties: [String: String], at now: ContinuousClock.Instant)
        -> [Action]
    {
        clients[id] = true
        var actions = handle(book.client(id, properties: properties), at: now)
        for node in book.nodes.filter({ $0.value.clientID == id }).keys.sorted() { actions += decide(node) }
        return actions
    }

    /// A node's `Props`: its channel volumes (the user's) and the mean of its soft volumes.
    package mutating func volumes(_ id: UInt32, channel volumes: [Float], soft: Float?, at now: ContinuousClock.Instant)
        -> [Action]
    {
        let user = volumes.reduce(0, +) / Float(max(volumes.count, 1))
        guard var entry = nodes[id]?.bound else {
            nodes[id, default: Node()].reported = user
            return []
        }
        if throughLoopbacks {
            // The node plays at the user's volume into its loopback, which plays at the session's gain:
            // a volume the user sets is heard under the duck as it is, and stays the node's.
            nodes[id]?.bound?.user = user
            return []
        }
        guard let known = entry.user else {
            // The first report since it was bound: the user's volume as it was before the adoption.
            entry.user = user
            nodes[id]?.bound = entry
            return []
        }
        var actions: [Action] = []
        if let soft, entry.echoes.report(volume: soft, at: now) != .own, let member = members[entry.stream] {
            // Another program wrote the soft volumes (another ducking host): ours are written again.
            nodes[id]?.bound = entry
            actions.append(.log("\(entry.name): soft volumes \(soft) written from outside; writing ours again"))
            actions += write(member.gain, to: id, at: now)
            entry = nodes[id]?.bound ?? entry
        }
        guard abs(user - known) > Self.userVolumeTolerance, let member = members[entry.stream] else {
            nodes[id]?.bound = entry
            return actions
        }
        // Someone set the channel volumes: PipeWire plays the node at them now, until our soft volumes are
        // written again, at once, at the gain the node had.
        entry.user = user
        nodes[id]?.bound = entry
        actions += write(member.gain, to: id, at: now)
        if isRestore(id, appeared: entry.appeared, at: now) { return actions }
        // A user (a mixer, `wpctl set-volume`): the new volume is the stream's volume. The session takes
        // it as the host's volume and sends the gain (under any duck) that follows; it is told first, so
        // a host that hears of the user's volume finds it in the session's snapshot.
        return actions + [
            .report(.externalVolumeChange(stream: entry.stream, volume: min(max(user, 0), 1))),
            .emit(.userVolume(stream: entry.stream, node: id, volume: user)),
        ]
    }

    /// Whether a change of `node`'s channel volumes at `now` is the session manager restoring the user's
    /// saved volume (nothing to report) rather than the user: WirePlumber does it as the node appears,
    /// before it is linked, so a change within ``StreamHealth/restoreWindow`` of its appearing and before
    /// it has run for ``restoreAfterRunning``.
    private func isRestore(_ node: UInt32, appeared: ContinuousClock.Instant, at now: ContinuousClock.Instant) -> Bool {
        guard now - appeared < StreamHealth.restoreWindow else { return false }
        return nodes[node]?.firstRunning.map { now - $0 < Self.restoreAfterRunning } ?? true
    }

    // MARK: Changes of the book

    private mutating func handle(_ changes: [AdoptionBook.Change], at now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        for change in changes {
            switch change {
            case .bound(let stream, let node):
                actions += bind(node, to: stream, at: now)
            case .unbound(let stream, let node):
                nodes[node]?.bound = nil
                actions.append(.emit(.released(stream: stream, node: node, name: "node \(node)", midRamp: false)))
            case .ownNodeSkipped(let stream, _, let name):
                if ownReported.insert("\(stream)/\(name)").inserted {
                    actions.append(.emit(.matchesOwnNode(stream: stream, name: name)))
                }
            case .notWritable(let stream, let node, let name):
                if ownReported.insert("\(stream)/\(node)/read-only").inserted {
                    actions.append(.emit(.notPermitted(stream: stream, node: node, name: name)))
                }
            case .playing(let stream, let playing):
                actions += playingChanged(stream, playing)
            }
        }
        return actions
    }

    /// A stream started or stopped playing: the host is told, and a stream that ducks while it plays
    /// asks the session for its duck (or gives it back) as an engine event, down the road every input takes.
    private func playingChanged(_ stream: StreamID, _ playing: Bool) -> [Action] {
        guard members[stream]?.ducksWhilePlaying == true else { return [.emit(.playing(stream: stream, playing))] }
        return [.emit(.playing(stream: stream, playing)), .report(.streamPlaying(stream: stream, playing: playing))]
    }

    private mutating func bind(_ node: UInt32, to stream: StreamID, at now: ContinuousClock.Instant) -> [Action] {
        guard let member = members[stream] else { return [] }
        let name = book.info(node)?.displayName ?? "node \(node)"
        let appearedAt = nodes[node]?.appeared ?? now
        nodes[node, default: Node()].bound = Bound(
            stream: stream, name: name, user: nodes[node]?.reported, appeared: appearedAt)
        if throughLoopbacks {
            // Nothing of the node is written, so nothing needs writing again after the session manager's
            // restore; the daemon removes the loopback with this process, so no watchdog keeps it.
            nodes[node]?.bound?.settled = Self.settleWrites.count
            nodes[node]?.bound?.movedAt = now
            return [.adoptedByGraph(node), .route(node: node, stream: stream, name: name)]
                + write(member.gain, to: node, at: now) + [
                    .emit(.adopted(stream: stream, node: node, name: name, latency: now - appearedAt))
                ]
        }
        // The watchdog first: from the write on, the node is ours to give back.
        return [.adoptedByGraph(node), .watchdogAdopted(node)] + write(member.gain, to: node, at: now) + [
            .emit(.adopted(stream: stream, node: node, name: name, latency: now - appearedAt))
        ]
    }

    /// Writes `node`'s soft volumes: the session's gain.
    private mutating func write(_ gain: Float, to node: UInt32, at now: ContinuousClock.Instant) -> [Action] {
        guard let entry = nodes[node]?.bound else { return [] }
        nodes[node]?.bound?.echoes.wrote(gain, at: now)
        return [.write(node: node, stream: entry.stream, soft: gain)]
    }

    private mutating func bindAll() -> [Action] {
        clients.keys.sorted().map { .bindClient($0) } + book.nodes.keys.sorted().map { .bindNode($0) }
    }

    /// A deferred node's properties arrived: adopted, it never was other audio; otherwise it is now.
    private mutating func decide(_ id: UInt32) -> [Action] {
        guard let known = book.nodes[id], known.hasInfo,
            known.clientID.map({ clients[$0] == true }) ?? true,
            let node = nodes[id]?.undecided
        else { return [] }
        nodes[id]?.undecided = nil
        guard book.stream(boundTo: id) == nil else { return [] }
        return [.otherAudio(id: id, mediaClass: node.mediaClass, name: node.name)]
    }
}
