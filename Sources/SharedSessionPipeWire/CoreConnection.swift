internal import CPipeWire
internal import CPipeWireShim
import Logging

/// What the connection reports to the engine, on the loop thread with the loop lock held.
protocol CoreConnectionObserver: RegistryObserver {
    /// The connection to the daemon broke (the core's EPIPE). It cannot be torn down from inside the
    /// callback that says so.
    func connectionBroke(_ reason: String)
    /// The daemon answered the core sync `seq`: it has handled every message sent before it.
    func coreDone(seq: Int32)
}

/// One connection to the daemon, from `pw_context_connect` to `pw_core_disconnect`: the core, its
/// listener, and the registry watcher of that connection. Loop thread (or the loop lock held) only.
final class CoreConnection {
    private let context: OpaquePointer
    /// The daemon's socket name (`remote.name`); nil: PipeWire's default (PIPEWIRE_REMOTE or pipewire-0).
    private let remoteName: String?
    /// The `media.category` the client declares (`Manager` for ``PipeWireAccess/manager``).
    private let mediaCategory: String?
    private let logger: Logger
    private unowned let observer: any CoreConnectionObserver

    /// The core while connected.
    private(set) var core: OpaquePointer?
    private let listener = Listener(pw_core_events(), fill: CoreConnection.fillEvents)
    private var watcher: RegistryWatcher?
    /// The sequence number of the sync sent after connecting; its `done` means the registry has
    /// announced every object that existed then (every sink a stream may name as its target).
    private var registrySync: Int32 = -1
    /// Whether the registry's first enumeration since the last connection is complete.
    private(set) var isRegistrySynced = false
    /// The sequence number of the latest `done` of the core: every message sent before the sync that
    /// asked for it has been handled by the daemon.
    private(set) var lastDone: Int32 = -1

    init(
        context: OpaquePointer, remoteName: String?, mediaCategory: String? = nil, logger: Logger,
        observer: any CoreConnectionObserver
    ) {
        self.context = context
        self.remoteName = remoteName
        self.mediaCategory = mediaCategory
        self.logger = logger
        self.observer = observer
    }

    /// Where libpipewire looks for the daemon with this connection's socket name.
    var socket: DaemonSocket {
        DaemonSocket(remoteName: remoteName) { name in getenv(name).map { String(cString: $0) } }
    }

    /// Connects the core and starts watching the registry. Returns 0 or a negative errno.
    func connect() -> Int32 {
        var properties: UnsafeMutablePointer<pw_properties>?
        if remoteName != nil || mediaCategory != nil { properties = CPipeWireShim_propertiesNew() }
        if let remoteName { pw_properties_set(properties, PW_KEY_REMOTE_NAME, remoteName) }
        // The client's properties: WirePlumber decides a sandboxed client's access from them as it appears.
        if let mediaCategory { pw_properties_set(properties, PW_KEY_MEDIA_CATEGORY, mediaCategory) }
        // pw_context_connect takes the properties, whether it succeeds or not.
        guard let core = pw_context_connect(context, properties, 0) else { return -Int32(errno) }
        self.core = core
        let context = Unmanaged.passUnretained(self).toOpaque()
        listener.add { _ = CPipeWireShim_coreAddListener(core, $0, $1, context) }
        watcher = RegistryWatcher(core: core, observer: observer)
        isRegistrySynced = false
        lastDone = -1
        registrySync = CPipeWireShim_coreSync(core)
        return 0
    }

    /// Closes the registry watcher and disconnects the core.
    func disconnect() {
        watcher?.close()
        watcher = nil
        guard let core else { return }
        listener.remove()
        pw_core_disconnect(core)
        self.core = nil
    }

    /// Asks the daemon to confirm every message sent so far; returns the sequence number its `done`
    /// will carry (see ``lastDone``), or nil when not connected.
    func sync() -> Int32? {
        guard let core else { return nil }
        return CPipeWireShim_coreSync(core)
    }

    /// Sets (or removes) `key` of `subject` in the "default" metadata; 0 or a negative errno.
    func setDefaultMetadata(subject: UInt32, key: String, type: String?, value: String?) -> Int32 {
        watcher?.setDefault(subject: subject, key: key, type: type, value: value) ?? -Int32(ENOTCONN)
    }

    private func done(id: UInt32, seq: Int32) {
        guard id == UInt32(PW_ID_CORE) else { return }
        lastDone = seq
        if seq == registrySync { isRegistrySynced = true }
        observer.coreDone(seq: seq)
    }

    private func error(id: UInt32, result: Int32, message: String) {
        if id == CPipeWireShim_idCore, result == -EPIPE {
            observer.connectionBroke("the connection to the PipeWire daemon broke (\(message))")
        } else {
            logger.warning("PipeWire error on object \(id): \(message) (\(result))")
        }
    }

    // C callbacks, in nonisolated code.
    private static func fillEvents(_ events: UnsafeMutablePointer<pw_core_events>) {
        events.pointee.version = UInt32(PW_VERSION_CORE_EVENTS)
        events.pointee.done = { data, id, seq in
            guard let data else { return }
            Unmanaged<CoreConnection>.fromOpaque(data).takeUnretainedValue().done(id: id, seq: seq)
        }
        events.pointee.error = { data, id, _, result, message in
            guard let data else { return }
            Unmanaged<CoreConnection>.fromOpaque(data).takeUnretainedValue().error(
                id: id, result: result, message: message.map { String(cString: $0) } ?? "")
        }
    }
}

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif
