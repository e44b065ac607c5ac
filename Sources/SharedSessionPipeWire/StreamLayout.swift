public import SharedSession

/// How ``PipeWireEngine`` lays the session's streams out as PipeWire nodes.
///
/// - ``perStream`` (the default): every stream is a `pw_stream` of its own, a node the desktop's mixer
///   (pavucontrol, GNOME's sound settings, `pw-top`) shows with its name and role, whose volume a user
///   can change there, and which follows its own target sink.
/// - ``mixedOverlays``: the streams whose role is in ``ownNodeRoles`` (the main video's `.movie`)
///   keep a node of their own; every other stream is mixed in the engine's process into one
///   "overlay bus" `pw_stream`, the same ``StreamRenderer`` kernel rendering each overlay into its
///   buffer. The daemon then schedules and mixes two nodes however many overlays play, which costs a
///   fraction of the CPU with many overlays (BENCHMARKS.md has the figures), but the overlays are no
///   longer visible or adjustable one by one in the desktop's mixer.
///
/// The session behaves the same in both: gains, ducks, pauses, suspends and their ramps are per stream,
/// per sample, in each stream's renderer. In the mixed layout a stream that names a target sink
/// (``StreamDescriptor/target``) keeps a node of its own, since the bus follows the default sink.
/// Voice capture is its own node in both.
public struct StreamLayout: Hashable, Sendable, CustomStringConvertible {
    /// Whether streams outside ``ownNodeRoles`` are mixed into the overlay bus.
    public let mixesOverlays: Bool
    /// In the mixed layout, the roles whose streams keep a node of their own.
    public let ownNodeRoles: Set<StreamRole>

    private init(mixesOverlays: Bool, ownNodeRoles: Set<StreamRole>) {
        self.mixesOverlays = mixesOverlays
        self.ownNodeRoles = ownNodeRoles
    }

    /// Every stream its own PipeWire node (the default).
    public static let perStream = StreamLayout(mixesOverlays: false, ownNodeRoles: [])

    /// The `.movie` streams (the main video's audio) their own nodes, every other stream mixed into
    /// one overlay bus.
    public static let mixedOverlays = mixedOverlays(keepingOwnNodes: [.movie])

    /// The streams whose role is in `roles` their own nodes, every other stream mixed into one overlay
    /// bus.
    public static func mixedOverlays(keepingOwnNodes roles: Set<StreamRole>) -> StreamLayout {
        StreamLayout(mixesOverlays: true, ownNodeRoles: roles)
    }

    /// Whether a stream with `descriptor` plays through the overlay bus in this layout: the layout
    /// mixes, its role is not in ``ownNodeRoles``, and it names no target sink.
    public func mixesOnBus(_ descriptor: StreamDescriptor) -> Bool {
        mixesOverlays && descriptor.target == nil && !ownNodeRoles.contains(descriptor.role)
    }

    public var description: String {
        guard mixesOverlays else { return "perStream" }
        return "mixedOverlays(own nodes: \(ownNodeRoles.map(\.name).sorted().joined(separator: ", ")))"
    }
}
