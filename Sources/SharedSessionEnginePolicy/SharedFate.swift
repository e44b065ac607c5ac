/// Whether the adoption watchdog dies with this process's sandbox: a PID namespace of the host's own is
/// torn down by the kernel, every process in it killed, when its first process (its init) ends. The
/// watchdog is spawned inside it. In a bubblewrap sandbox (Flatpak runs every app in one) the init is
/// bwrap, which ends as soon as the app's process does: then every death of the host, a crash or a
/// SIGKILL or an `exit` without the shutdown, takes the watchdog along, and a node still ducked stays
/// ducked. In another container it happens when the container is stopped or killed whole.
///
/// Read from the PID namespace of this process (`/proc/self/ns/pid`), the command of the namespace's
/// init (`/proc/1/comm`) and whether `/.flatpak-info` exists. A plain value, tested without a sandbox.
package struct SharedFate: Sendable, Equatable {
    /// The inode of the initial PID namespace, the one the machine's init runs in (the kernel's
    /// `PROC_PID_INIT_INO`).
    package static let initialNamespace: UInt64 = 0xEFFF_FFFC

    /// The inode of this process's PID namespace, from the link `pid:[INODE]`; nil if unreadable.
    package let namespace: UInt64?
    /// The command (`comm`) of the namespace's process 1.
    package let initCommand: String?
    /// Whether the root holds `/.flatpak-info` (what PipeWire's access module checks for Flatpak).
    package let flatpak: Bool

    /// `namespaceLink` is the target of `/proc/self/ns/pid` (`pid:[4026531836]`).
    package init(namespaceLink: String?, initCommand: String?, flatpak: Bool) {
        namespace = namespaceLink.flatMap { link in
            guard let open = link.firstIndex(of: "["), let close = link.lastIndex(of: "]") else { return nil }
            return UInt64(link[link.index(after: open)..<close])
        }
        self.initCommand = initCommand.map { String($0.filter { $0 != "\n" }) }
        self.flatpak = flatpak
    }

    /// Why the watchdog shares this process's fate, or nil when it outlives it.
    package var reason: String? {
        guard let namespace, namespace != Self.initialNamespace else { return nil }
        if flatpak || initCommand == "bwrap" {
            let sandbox = flatpak ? "a Flatpak sandbox" : "a bubblewrap sandbox"
            return "this process runs in \(sandbox) with a PID namespace of its own: when this process ends, "
                + "however it ends, the sandbox's init ends and the kernel kills every process in it, the "
                + "adoption watchdog too, so a node still ducked then stays ducked until its player closes it. "
                + "Close the adopted streams or shut the engine down before exiting: those give nodes back"
        }
        return "this process runs in a container with a PID namespace of its own (its init is "
            + "\(initCommand ?? "unknown")): when the container is stopped or killed whole, the kernel kills "
            + "every process in it, the adoption watchdog too, and a node still ducked stays ducked"
    }

    /// This process's.
    package static func current() -> SharedFate {
        var link = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/self/ns/pid", &link, link.count - 1)
        let namespaceLink =
            count > 0 ? String(decoding: link[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        var command: String?
        if let file = fopen("/proc/1/comm", "r") {
            defer { fclose(file) }
            var buffer = [CChar](repeating: 0, count: 64)
            if fgets(&buffer, Int32(buffer.count), file) != nil {
                command = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        return SharedFate(
            namespaceLink: namespaceLink, initCommand: command, flatpak: access("/.flatpak-info", F_OK) == 0)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
