public import SharedSession

/// Which nodes of other PipeWire clients a session adopts: a node matches when **any** of the rule's
/// criteria matches it (see ``NodeAdoption``).
///
/// A plain value: ``matches(_:)`` is pure, so a host can check its rules against the properties it
/// expects without a daemon.
///
/// ```swift
/// let movie = AdoptionRule(.processID(player.pid, includingChildren: true))
/// let clip = AdoptionRule(.applicationName("WebKitWebProcess"), .mediaRole("Music"))
/// ```
public struct AdoptionRule: Hashable, Sendable, CustomStringConvertible {
    /// One property a node (or the client that made it) must have.
    public enum Criterion: Hashable, Sendable, CustomStringConvertible {
        /// The client's process id (`pipewire.sec.pid`, else `application.process.id`, which a client
        /// of the PulseAudio server is known by, see ``ForeignNodeInfo/processID``); with
        /// `includingChildren`, also any process it started, however deep (a player that plays through
        /// a helper process).
        case processID(Int32, includingChildren: Bool)
        /// The client's or node's `application.name` (mpv: "mpv", GStreamer's tools: "gst-launch-1.0").
        case applicationName(String)
        /// The client's `application.process.binary`: the executable's file name.
        case processBinary(String)
        /// The node's `media.role` ("Movie", "Music"…).
        case mediaRole(String)
        /// The node's `node.name`.
        case nodeName(String)

        public var description: String {
            switch self {
            case .processID(let pid, let children): "process \(pid)\(children ? " or a child of it" : "")"
            case .applicationName(let name): "application.name \"\(name)\""
            case .processBinary(let name): "application.process.binary \"\(name)\""
            case .mediaRole(let role): "media.role \"\(role)\""
            case .nodeName(let name): "node.name \"\(name)\""
            }
        }
    }

    /// The criteria; a node matching any one of them is adopted.
    public let criteria: [Criterion]
    /// How long after adoption starts a node must have matched; past it, with none seen, the adoption
    /// reports ``AdoptionEvent/matchedNothing(stream:rule:after:)`` (and keeps waiting).
    public var expectedWithin: Duration

    /// A rule matching a node that matches any of `criteria`.
    public init(_ criteria: Criterion..., expectedWithin: Duration = .seconds(5)) {
        self.init(criteria: criteria, expectedWithin: expectedWithin)
    }

    /// A rule matching a node that matches any of `criteria`.
    public init(criteria: [Criterion], expectedWithin: Duration = .seconds(5)) {
        self.criteria = criteria
        self.expectedWithin = expectedWithin
    }

    /// Whether `node` matches any criterion.
    public func matches(_ node: ForeignNodeInfo) -> Bool {
        criteria.contains { matchingCriterion($0, node) }
    }

    /// The first criterion `node` matches, for messages.
    public func criterion(matching node: ForeignNodeInfo) -> Criterion? {
        criteria.first { matchingCriterion($0, node) }
    }

    private func matchingCriterion(_ criterion: Criterion, _ node: ForeignNodeInfo) -> Bool {
        switch criterion {
        case .processID(let pid, let children):
            guard let own = node.processID else { return false }
            return own == pid || (children && node.ancestorProcessIDs.contains(pid))
        case .applicationName(let name):
            return node.properties["application.name"] == name
        case .processBinary(let name):
            return node.properties["application.process.binary"] == name
        case .mediaRole(let role):
            return node.properties["media.role"] == role
        case .nodeName(let name):
            return node.properties["node.name"] == name
        }
    }

    /// Checks the rule before it is used: it must have a criterion, no empty name, a positive
    /// process id and a positive wait.
    public func validate() throws(SessionError) {
        guard !criteria.isEmpty else {
            throw SessionError(
                code: .invalidValue,
                message: "an adoption rule needs at least one criterion (a process id, application.name, "
                    + "application.process.binary, media.role or node.name)")
        }
        for criterion in criteria {
            switch criterion {
            case .processID(let pid, _) where pid <= 0:
                throw SessionError(code: .invalidValue, message: "adoption rule: \(criterion): a process id is > 0")
            case .applicationName(let name), .processBinary(let name), .mediaRole(let name), .nodeName(let name):
                if name.isEmpty {
                    throw SessionError(
                        code: .invalidValue, message: "adoption rule: \(criterion): an empty name matches nothing")
                }
            default:
                break
            }
        }
        guard expectedWithin > .zero else {
            throw SessionError(
                code: .invalidValue,
                message: "adoption rule: expectedWithin is \(expectedWithin); give a positive time")
        }
    }

    public var description: String {
        criteria.map(\.description).joined(separator: " or ")
    }
}

/// What is known of another client's node: its properties merged with its client's (the node's win),
/// and the process ids above the client's process, for ``AdoptionRule/Criterion/processID(_:includingChildren:)``.
public struct ForeignNodeInfo: Hashable, Sendable {
    /// The registry's id of the node.
    public let id: UInt32
    /// The node's and its client's properties (`node.name`, `media.role`, `application.name`,
    /// `application.process.binary`, `application.process.id`…).
    public var properties: [String: String]
    /// The parent process of the client's process, its parent, and so on up to (not including) 1.
    public var ancestorProcessIDs: [Int32]

    /// A node's description.
    public init(id: UInt32, properties: [String: String], ancestorProcessIDs: [Int32] = []) {
        self.id = id
        self.properties = properties
        self.ancestorProcessIDs = ancestorProcessIDs
    }

    /// The client's process id: `pipewire.sec.pid` (which the daemon sets from the socket, so a client
    /// cannot lie about it), else `application.process.id`.
    ///
    /// A client of PipeWire's PulseAudio server (`pulse.server.type` set: every app playing through
    /// the PulseAudio API, as GStreamer's `pulsesink`, which desktop GStreamer players pick, and web
    /// browsers do) reaches the daemon over `pipewire-pulse`'s socket, so its `pipewire.sec.pid` is
    /// the server's: its process is the `application.process.id` the app gave the server.
    public var processID: Int32? {
        let declared = properties["application.process.id"].flatMap { Int32($0) }
        if properties["pulse.server.type"] != nil, let declared { return declared }
        return properties["pipewire.sec.pid"].flatMap { Int32($0) } ?? declared
    }

    /// The node's `node.name`, or its id.
    public var displayName: String { properties["node.name"] ?? "node \(id)" }
}
