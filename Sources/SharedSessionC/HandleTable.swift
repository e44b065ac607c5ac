import SharedSession
import SharedSessionRemote
import Synchronization

/// Every object the C API handed out, by handle. Handles are never reused (a counter), so a released
/// or stale handle is simply absent: every misuse is a lookup that fails, never a dangling pointer.
/// Objects are taken out under the lock and used outside it.
final class HandleTable: Sendable {
    enum Object: Sendable {
        case session(SessionBox)
        case lease(SessionLease)
        case duck(DuckLease)
        case stream(StreamHandle)
        case server(SessionServer)

        var kind: String {
            switch self {
            case .session: "session"
            case .lease: "lease"
            case .duck: "duck"
            case .stream: "stream"
            case .server: "server"
            }
        }
    }

    private struct Entry {
        let object: Object
        /// The session handle it belongs to (its own for a session): closing that session releases it.
        let owner: UInt64
    }

    private struct Storage {
        var next: UInt64 = 1
        var entries: [UInt64: Entry] = [:]
    }

    static let shared = HandleTable()

    private let storage = Locked(Storage())

    /// Files `object` under a new handle, unless its session was closed meanwhile (`owner` nil: the
    /// object is a session of its own).
    func add(_ object: Object, session owner: UInt64?) throws(CallError) -> UInt64 {
        let handle: UInt64? = storage.withLock { storage in
            let handle = storage.next
            if let owner, storage.entries[owner] == nil { return nil }
            storage.next += 1
            storage.entries[handle] = Entry(object: object, owner: owner ?? handle)
            return handle
        }
        guard let handle else { throw .invalidHandle(owner ?? 0) }
        return handle
    }

    /// The object behind `handle`.
    func object(_ handle: UInt64) throws(CallError) -> Object {
        guard let entry = storage.withLock({ $0.entries[handle] }) else { throw .invalidHandle(handle) }
        return entry.object
    }

    /// The session behind `handle`.
    func session(_ handle: UInt64) throws(CallError) -> SessionBox {
        let object = try object(handle)
        guard case .session(let box) = object else { throw wrongKind(handle, object, wanted: "session") }
        return box
    }

    /// Takes `handle` out of the table: the one caller that gets it releases the object.
    func remove(_ handle: UInt64) throws(CallError) -> Object {
        guard let entry = storage.withLock({ $0.entries.removeValue(forKey: handle) }) else {
            throw .invalidHandle(handle)
        }
        return entry.object
    }

    /// Takes out every object of the session `handle` (not the session itself).
    func removeAll(ofSession handle: UInt64) -> [Object] {
        storage.withLock { storage in
            let owned = storage.entries.filter { $0.value.owner == handle && $0.key != handle }
            for key in owned.keys { storage.entries.removeValue(forKey: key) }
            return owned.sorted { $0.key < $1.key }.map(\.value.object)
        }
    }

    func wrongKind(_ handle: UInt64, _ object: Object, wanted: String) -> CallError {
        CallError(status: .wrongHandleKind, message: "handle \(handle) is a \(object.kind), not a \(wanted)")
    }
}
