/// What the engine's PipeWire client asks the session manager to let it do with other applications'
/// objects, given to ``PipeWireEngine/init(applicationName:remoteName:layout:access:adoptionCarrier:logger:)``.
///
/// Outside a sandbox, WirePlumber gives every client full access, and this changes nothing. A sandboxed
/// client (a Flatpak app: PipeWire's access module finds `/.flatpak-info` in its root) gets read and
/// execute access only, so it can play and record but not write another application's `Props`: it
/// cannot duck another player (``NodeAdoption`` refuses with `accessRefused`, or reports
/// ``AdoptionEvent/notPermitted(stream:node:name:)`` for a node that appears later). WirePlumber 0.4 and
/// 0.5 give a sandboxed client full access when its `media.category` is `Manager`, the category of
/// mixers such as pavucontrol; the engine declares it only when asked to.
public enum PipeWireAccess: Sendable, Hashable, CustomStringConvertible {
    /// An application's client: nothing is declared (the default).
    case standard
    /// A mixer's client: the engine and its adoption watchdog declare `media.category = Manager`, which
    /// a sandboxed host needs to adopt other players' nodes. A host that adopts nothing has no use for it.
    case manager

    /// The `media.category` the client declares, if any.
    var mediaCategory: String? {
        switch self {
        case .standard: nil
        case .manager: "Manager"
        }
    }

    public var description: String {
        switch self {
        case .standard: "standard"
        case .manager: "manager"
        }
    }
}
