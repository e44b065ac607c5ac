/// Where libpipewire looks for the daemon's socket, as its `local-socket.c` does (0.3.65): the socket's
/// name (`remote.name`, else `PIPEWIRE_REMOTE`, else `pipewire-0`) in the user's runtime directory
/// (`PIPEWIRE_RUNTIME_DIR`, else `XDG_RUNTIME_DIR`, else `USERPROFILE`), then in the system-wide
/// `/run/pipewire`; an absolute name is used as it is.
///
/// A plain value, for the error that says where the engine looked when no daemon answered.
struct DaemonSocket: Sendable, Hashable {
    /// The socket's name, and what chose it (`remoteName`, `PIPEWIRE_REMOTE` or `the default`).
    let name: String
    let nameSource: String
    /// The runtime directory and the variable it came from; nil when none of them is set.
    let runtimeDirectory: String?
    let runtimeVariable: String?

    /// The system-wide directory libpipewire tries after the user's.
    static let systemDirectory = "/run/pipewire"

    init(remoteName: String?, environment: (String) -> String?) {
        func set(_ variable: String) -> String? { environment(variable).flatMap { $0.isEmpty ? nil : $0 } }
        if let remoteName {
            (name, nameSource) = (remoteName, "remoteName")
        } else if let remote = set("PIPEWIRE_REMOTE") {
            (name, nameSource) = (remote, "PIPEWIRE_REMOTE")
        } else {
            (name, nameSource) = ("pipewire-0", "the default")
        }
        let variable = ["PIPEWIRE_RUNTIME_DIR", "XDG_RUNTIME_DIR", "USERPROFILE"].first { set($0) != nil }
        runtimeVariable = variable
        runtimeDirectory = variable.flatMap(set)
    }

    /// The socket paths tried, in order.
    var paths: [String] {
        if name.hasPrefix("/") { return [name] }
        return [runtimeDirectory, Self.systemDirectory].compactMap { $0.map { "\($0)/\(name)" } }
    }

    /// Where the engine looked, for a message: the paths tried and where the directory and name came from.
    var searched: String {
        let origin = nameSource == "the default" ? "" : " (the socket's name from \(nameSource))"
        if name.hasPrefix("/") { return "looked for the daemon's socket at \(name)\(origin)" }
        guard let runtimeDirectory, let runtimeVariable else {
            return "found no runtime directory (XDG_RUNTIME_DIR is not set), so looked for the daemon's socket "
                + "only at \(Self.systemDirectory)/\(name)\(origin)"
        }
        return "looked for the daemon's socket at \(runtimeDirectory)/\(name) (the runtime directory from "
            + "\(runtimeVariable)=\(runtimeDirectory)), then at \(Self.systemDirectory)/\(name)\(origin)"
    }
}
