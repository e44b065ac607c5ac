/// How a stream presents itself to the engine and to the session.
public struct StreamDescriptor: Hashable, Sendable {
    /// A name for logs, snapshots and the sound server's node description.
    public var name: String
    /// The stream's role.
    public var role: StreamRole
    /// Background music is muted while another app's audio plays under a mixable category (the
    /// Wwise BGM bus behaviour).
    public var isBackgroundMusic: Bool
    /// The output to play to, by the sound server's name for it (PipeWire's `node.name` of a sink);
    /// `nil` follows the default output. An engine with one output (the offline engine) ignores it.
    public var target: String?
    /// A stream the host marks as exempt (its own ringback, a notification it plays) is never ducked,
    /// paused or muted by a unit's request. On the main stream, units' duck and pause requests are
    /// granted (and reported with the `exemptStream` limit) but leave it as the host set it.
    public var isExempt: Bool

    /// Describes a stream.
    public init(
        name: String, role: StreamRole, isBackgroundMusic: Bool = false, target: String? = nil,
        isExempt: Bool = false
    ) {
        self.name = name
        self.role = role
        self.isBackgroundMusic = isBackgroundMusic
        self.target = target
        self.isExempt = isExempt
    }
}
