public import SharedSession

#if canImport(Glibc)
    import Glibc
#endif

/// Who a peer process is, as the kernel says (`SO_PEERCRED`), and the owner name it asked for.
public struct UnitCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The peer's process id when it connected.
    public let pid: Int32
    /// The peer's user id.
    public let uid: UInt32
    /// The peer's group id.
    public let gid: UInt32
    /// The owner name the unit's hello asked for.
    public let requestedOwner: String

    /// Credentials.
    public init(pid: Int32, uid: UInt32, gid: UInt32, requestedOwner: String) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.requestedOwner = requestedOwner
    }

    public var description: String { "pid \(pid), uid \(uid), asking to be \"\(requestedOwner)\"" }
}

/// Which processes may join a ``SessionServer``, and under which owner names.
///
/// The host decides each connection's owner name: a unit asks for one in its hello, and the policy
/// accepts it, gives another, or refuses. Whatever name it gives, the host's per-unit limits for that
/// name (`SessionPolicy/unitLimits`) apply to the unit as to an in-process one, and only one
/// connection holds a name at a time, so a unit cannot act under another unit's name.
public struct RemoteAccessPolicy: Sendable {
    /// The user ids allowed to connect: by default only the host's own user.
    public var allowedUsers: Set<UInt32>
    /// The owner name a connection gets, from its credentials; throws to refuse it.
    public var ownerName: @Sendable (UnitCredentials) throws(SessionError) -> String

    /// A policy from its parts.
    public init(
        allowedUsers: Set<UInt32> = RemoteAccessPolicy.hostUser,
        ownerName: @escaping @Sendable (UnitCredentials) throws(SessionError) -> String
    ) {
        self.allowedUsers = allowedUsers
        self.ownerName = ownerName
    }

    /// The host process's own (effective) user id.
    public static var hostUser: Set<UInt32> { [geteuid()] }

    /// The host's own user only; a unit gets the name it asks for, if it is a plain name (letters,
    /// digits, `.`, `_`, `-`; 1 to 64 of them), one of `owners` when given, and none of `reserved` (the
    /// names the host's own leases carry).
    public static func sameUser(owners: Set<String>? = nil, reserved: Set<String> = []) -> RemoteAccessPolicy {
        RemoteAccessPolicy { credentials throws(SessionError) in
            let name = credentials.requestedOwner
            try checkPlainName(name)
            if let owners, !owners.contains(name) {
                throw SessionError(
                    code: .accessRefused,
                    message: "owner \"\(name)\" is not one the host accepts: ask for one of \(owners.sorted())")
            }
            if reserved.contains(name) {
                throw SessionError(
                    code: .accessRefused, message: "owner \"\(name)\" is the host's own: a unit takes a name of its own"
                )
            }
            return name
        }
    }

    /// Checks that `name` is a plain owner name.
    public static func checkPlainName(_ name: String) throws(SessionError) {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed, (1...64).contains(name.utf8.count) else {
            throw SessionError(
                code: .accessRefused,
                message:
                    "owner \"\(name.prefix(80))\" is not a plain name: use 1 to 64 letters, digits, '.', '_' or '-'")
        }
    }
}
