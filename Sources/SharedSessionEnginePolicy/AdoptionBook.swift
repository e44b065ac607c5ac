package import SharedSession

/// Which foreign nodes the engine's adoptions hold: the other clients and their nodes as the registry
/// and their info say, the adoptions (one per session stream made of an ``AdoptionRule``), and which
/// node each adoption is bound to. It never binds the engine's own nodes.
///
/// The registry callbacks feed it; it returns what changed. A plain value, tested without a daemon.
package struct AdoptionBook: Sendable {
    /// What happened to an adoption, for the engine to act on and report.
    package enum Change: Equatable, Sendable {
        /// `node` matches the adoption of `stream`: bind it (write the stream's gain to it).
        case bound(stream: StreamID, node: UInt32)
        /// `node`, bound to `stream`, went away.
        case unbound(stream: StreamID, node: UInt32)
        /// `node` matches the rule of `stream` but is one of the engine's own: left alone.
        case ownNodeSkipped(stream: StreamID, node: UInt32, name: String)
        /// `node` matches the rule of `stream` but this client may not write its `Props` (a sandboxed
        /// client's read-only access): left alone, for another node or a later grant.
        case notWritable(stream: StreamID, node: UInt32, name: String)
        /// Whether any node bound to `stream` is running changed.
        case playing(stream: StreamID, Bool)
    }

    package struct Adoption: Sendable {
        package let rule: AdoptionRule
        package let started: ContinuousClock.Instant
        package var nodes: Set<UInt32> = []
        package var everMatched = false
        package var reportedNothing = false
        package var playing = false
    }

    package struct Node: Sendable {
        package var properties: [String: String]
        package var clientID: UInt32?
        package var running = false
        /// Set once the node's info (its full properties) arrived: rules are matched from then on.
        package var hasInfo = false
        /// Whether the daemon lets this client write the node's `Props` (write and execute permission).
        package var writable = true
    }

    /// The engine's own process and node-name prefix: never adopted.
    package let ownProcessID: Int32
    package let ownPrefix: String
    package private(set) var adoptions: [StreamID: Adoption] = [:]
    package private(set) var nodes: [UInt32: Node] = [:]
    private var clients: [UInt32: [String: String]] = [:]
    /// Parent process ids by process, for ``AdoptionRule/Criterion/processID(_:includingChildren:)``.
    package var ancestors: @Sendable (Int32) -> [Int32]

    package init(ownProcessID: Int32, ownPrefix: String, ancestors: @escaping @Sendable (Int32) -> [Int32]) {
        self.ownProcessID = ownProcessID
        self.ownPrefix = ownPrefix
        self.ancestors = ancestors
    }

    /// The node's description as rules see it: its client's properties overlaid with its own.
    package func info(_ id: UInt32) -> ForeignNodeInfo? {
        guard let node = nodes[id] else { return nil }
        var properties = node.clientID.flatMap { clients[$0] } ?? [:]
        properties.merge(node.properties) { _, own in own }
        var info = ForeignNodeInfo(id: id, properties: properties)
        if let pid = info.processID { info.ancestorProcessIDs = ancestors(pid) }
        return info
    }

    package func isOwn(_ info: ForeignNodeInfo) -> Bool {
        info.processID == ownProcessID || info.properties["node.name"]?.hasPrefix(ownPrefix) == true
    }

    /// Whether a node of this media class can be adopted: another client's playback stream.
    package static func isAdoptable(mediaClass: String) -> Bool { mediaClass == "Stream/Output/Audio" }

    // MARK: Adoptions

    /// Starts adopting by `rule` for `stream`; returns the bindings of the nodes already known.
    package mutating func adopt(_ stream: StreamID, rule: AdoptionRule, at now: ContinuousClock.Instant) -> [Change] {
        adoptions[stream] = Adoption(rule: rule, started: now)
        return nodes.keys.sorted().flatMap { evaluate($0, for: stream) }
    }

    /// Stops adopting for `stream`; returns the nodes it held.
    package mutating func release(_ stream: StreamID) -> Set<UInt32> {
        adoptions.removeValue(forKey: stream)?.nodes ?? []
    }

    /// The adoption bound to `node`, if any.
    package func stream(boundTo node: UInt32) -> StreamID? {
        adoptions.first { $0.value.nodes.contains(node) }?.key
    }

    /// Adoptions that matched nothing within their rule's wait, each reported once.
    package mutating func overdue(at now: ContinuousClock.Instant) -> [(StreamID, AdoptionRule, Duration)] {
        var overdue: [(StreamID, AdoptionRule, Duration)] = []
        for (stream, adoption) in adoptions.sorted(by: { $0.key < $1.key })
        where !adoption.everMatched && !adoption.reportedNothing
            && now - adoption.started >= adoption.rule.expectedWithin
        {
            adoptions[stream]?.reportedNothing = true
            overdue.append((stream, adoption.rule, now - adoption.started))
        }
        return overdue
    }

    /// The next instant an adoption's wait runs out, for the timer.
    package var nextWaitDeadline: ContinuousClock.Instant? {
        adoptions.values.filter { !$0.everMatched && !$0.reportedNothing }
            .map { $0.started + $0.rule.expectedWithin }.min()
    }

    // MARK: The registry

    /// A client appeared or its info arrived: its nodes are matched again.
    package mutating func client(_ id: UInt32, properties: [String: String]) -> [Change] {
        clients[id, default: [:]].merge(properties) { _, new in new }
        return nodes.filter { $0.value.clientID == id }.keys.sorted().flatMap { evaluateAll($0) }
    }

    /// A node appeared in the registry (its global properties, and whether this client may write its
    /// `Props`); matched once its info arrives.
    package mutating func nodeAppeared(_ id: UInt32, properties: [String: String], writable: Bool = true) {
        nodes[id] = Node(
            properties: properties, clientID: properties["client.id"].flatMap { UInt32($0) }, writable: writable)
    }

    /// A node's info arrived: its full properties and its state.
    package mutating func nodeInfo(_ id: UInt32, properties: [String: String]?, running: Bool) -> [Change] {
        guard var node = nodes[id] else { return [] }
        if let properties {
            node.properties.merge(properties) { _, new in new }
            if let client = properties["client.id"].flatMap({ UInt32($0) }) { node.clientID = client }
        }
        let first = !node.hasInfo
        node.hasInfo = true
        node.running = running
        nodes[id] = node
        var changes = first || properties != nil ? evaluateAll(id) : []
        if let stream = stream(boundTo: id) { changes += updatePlaying(stream) }
        return changes
    }

    /// A global went away (a node, a client, anything).
    package mutating func removed(_ id: UInt32) -> [Change] {
        clients[id] = nil
        guard nodes.removeValue(forKey: id) != nil, let stream = stream(boundTo: id) else { return [] }
        adoptions[stream]?.nodes.remove(id)
        return [.unbound(stream: stream, node: id)] + updatePlaying(stream)
    }

    /// The connection went away: every node and client is forgotten; the adoptions stay, unbound.
    package mutating func disconnected() -> [Change] {
        var changes: [Change] = []
        for stream in adoptions.keys.sorted() {
            for node in adoptions[stream]!.nodes.sorted() { changes.append(.unbound(stream: stream, node: node)) }
            adoptions[stream]?.nodes.removeAll()
            changes += updatePlaying(stream)
        }
        nodes.removeAll()
        clients.removeAll()
        return changes
    }

    // MARK: Matching

    private mutating func evaluateAll(_ node: UInt32) -> [Change] {
        adoptions.keys.sorted().flatMap { evaluate(node, for: $0) }
    }

    private mutating func evaluate(_ id: UInt32, for stream: StreamID) -> [Change] {
        guard let node = nodes[id], node.hasInfo, let adoption = adoptions[stream], !adoption.nodes.contains(id),
            self.stream(boundTo: id) == nil, let info = info(id), adoption.rule.matches(info)
        else { return [] }
        if isOwn(info) { return [.ownNodeSkipped(stream: stream, node: id, name: info.displayName)] }
        if !node.writable { return [.notWritable(stream: stream, node: id, name: info.displayName)] }
        adoptions[stream]?.nodes.insert(id)
        adoptions[stream]?.everMatched = true
        return [.bound(stream: stream, node: id)] + updatePlaying(stream)
    }

    private mutating func updatePlaying(_ stream: StreamID) -> [Change] {
        guard let adoption = adoptions[stream] else { return [] }
        let playing = adoption.nodes.contains { nodes[$0]?.running == true }
        guard playing != adoption.playing else { return [] }
        adoptions[stream]?.playing = playing
        return [.playing(stream: stream, playing)]
    }
}
