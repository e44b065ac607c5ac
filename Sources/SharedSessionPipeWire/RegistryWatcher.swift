internal import CPipeWire
internal import CPipeWireShim

/// What the registry and the "default" metadata tell the engine, on the loop thread.
protocol RegistryObserver: AnyObject {
    func nodeAdded(id: UInt32, mediaClass: String, name: String)
    func nodeRemoved(id: UInt32)
    func defaultSinkChanged(to name: String?)
    /// A clock setting of the graph (`clock.force-quantum`, `clock.min-quantum`…) changed in the
    /// "settings" metadata: the graph may run at another quantum.
    func clockSettingsChanged()
    /// A node or a client appeared, with its global properties and this client's permissions on it
    /// (`PW_PERM_*` bits: a sandboxed client may only read and execute); `registry` binds it.
    func globalAdded(
        id: UInt32, type: String, permissions: UInt32, properties: [String: String], registry: OpaquePointer)
}

/// Watches one connection's registry for nodes, its "default" metadata for the default sink, and its
/// "settings" metadata for the graph's clock.
/// Lives as long as that connection; every method and callback runs with the loop lock held.
final class RegistryWatcher {
    private let registry: OpaquePointer
    private let registryListener = Listener(pw_registry_events(), fill: RegistryWatcher.fillRegistryEvents)
    private var metadata: OpaquePointer?
    private let metadataListener = Listener(pw_metadata_events(), fill: RegistryWatcher.fillMetadataEvents)
    private var settings: OpaquePointer?
    private let settingsListener = Listener(pw_metadata_events(), fill: RegistryWatcher.fillSettingsEvents)
    private unowned let observer: any RegistryObserver
    private var closed = false

    init?(core: OpaquePointer, observer: any RegistryObserver) {
        guard let registry = CPipeWireShim_coreGetRegistry(core) else { return nil }
        self.registry = registry
        self.observer = observer
        let context = Unmanaged.passUnretained(self).toOpaque()
        registryListener.add { _ = CPipeWireShim_registryAddListener(registry, $0, $1, context) }
    }

    /// Removes the listeners and the proxies. Call before the core is disconnected.
    func close() {
        guard !closed else { return }
        closed = true
        if let metadata {
            metadataListener.remove()
            pw_proxy_destroy(metadata)
            self.metadata = nil
        }
        if let settings {
            settingsListener.remove()
            pw_proxy_destroy(settings)
            self.settings = nil
        }
        registryListener.remove()
        pw_proxy_destroy(registry)
    }

    /// Sets (or, `value` nil, removes) `key` of `subject` in the "default" metadata, where the session
    /// manager reads a stream's `target.object`. Returns 0 or a negative errno (`ENOENT`: the daemon has
    /// announced no "default" metadata yet).
    func setDefault(subject: UInt32, key: String, type: String?, value: String?) -> Int32 {
        guard let metadata else { return -Int32(ENOENT) }
        return CPipeWireShim_metadataSetProperty(metadata, subject, key, type, value)
    }

    private func global(id: UInt32, type: String, permissions: UInt32, props: UnsafePointer<spa_dict>?) {
        if type == String(cString: CPipeWireShim_typeNode) || type == String(cString: CPipeWireShim_typeClient) {
            observer.globalAdded(
                id: id, type: type, permissions: permissions, properties: dictionary(props), registry: registry)
        }
        if type == String(cString: CPipeWireShim_typeNode) {
            guard let mediaClass = Self.lookup(props, "media.class") else { return }
            observer.nodeAdded(id: id, mediaClass: mediaClass, name: Self.lookup(props, "node.name") ?? "")
        } else if type == String(cString: CPipeWireShim_typeMetadata) {
            let name = Self.lookup(props, "metadata.name")
            if name == "default", metadata == nil, let proxy = CPipeWireShim_registryBindMetadata(registry, id) {
                metadata = proxy
                let context = Unmanaged.passUnretained(self).toOpaque()
                metadataListener.add { _ = CPipeWireShim_metadataAddListener(proxy, $0, $1, context) }
            } else if name == "settings", settings == nil,
                let proxy = CPipeWireShim_registryBindMetadata(registry, id)
            {
                settings = proxy
                let context = Unmanaged.passUnretained(self).toOpaque()
                settingsListener.add { _ = CPipeWireShim_metadataAddListener(proxy, $0, $1, context) }
            }
        }
    }

    private func setting(subject: UInt32, key: String?) {
        guard subject == 0, key == nil || key?.hasPrefix("clock.") == true else { return }
        observer.clockSettingsChanged()
    }

    private func property(subject: UInt32, key: String?, value: String?) {
        guard subject == 0 else { return }
        if key == nil || key == "default.audio.sink" {
            observer.defaultSinkChanged(to: value.flatMap(Self.nodeName(fromJSON:)))
        }
    }

    private static func lookup(_ props: UnsafePointer<spa_dict>?, _ key: String) -> String? {
        CPipeWireShim_dictLookup(props, key).map { String(cString: $0) }
    }

    /// The `name` of a metadata value such as `{"name":"sharedsession-sink"}`.
    static func nodeName(fromJSON json: String) -> String? {
        let characters = Array(json.utf8)
        let key = Array("\"name\"".utf8)
        guard characters.count > key.count,
            let start = (0...(characters.count - key.count)).first(where: {
                characters[$0..<($0 + key.count)].elementsEqual(key)
            })
        else { return nil }
        var index = start + key.count
        while index < characters.count,
            [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "\t")]
                .contains(characters[index])
        {
            index += 1
        }
        guard index < characters.count, characters[index] == UInt8(ascii: "\"") else { return nil }
        let body = characters[(index + 1)...]
        guard let end = body.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: body[..<end], as: UTF8.self)
    }

    // C callbacks, in nonisolated code.
    private static func fillRegistryEvents(_ registry: UnsafeMutablePointer<pw_registry_events>) {
        registry.pointee.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        registry.pointee.global = { data, id, permissions, type, _, props in
            guard let data, let type else { return }
            Unmanaged<RegistryWatcher>.fromOpaque(data).takeUnretainedValue()
                .global(id: id, type: String(cString: type), permissions: permissions, props: props)
        }
        registry.pointee.global_remove = { data, id in
            guard let data else { return }
            Unmanaged<RegistryWatcher>.fromOpaque(data).takeUnretainedValue().observer.nodeRemoved(id: id)
        }
    }

    private static func fillMetadataEvents(_ metadata: UnsafeMutablePointer<pw_metadata_events>) {
        metadata.pointee.version = UInt32(PW_VERSION_METADATA_EVENTS)
        metadata.pointee.property = { data, subject, key, _, value in
            guard let data else { return 0 }
            Unmanaged<RegistryWatcher>.fromOpaque(data).takeUnretainedValue().property(
                subject: subject, key: key.map { String(cString: $0) }, value: value.map { String(cString: $0) })
            return 0
        }
    }

    private static func fillSettingsEvents(_ settings: UnsafeMutablePointer<pw_metadata_events>) {
        settings.pointee.version = UInt32(PW_VERSION_METADATA_EVENTS)
        settings.pointee.property = { data, subject, key, _, _ in
            guard let data else { return 0 }
            Unmanaged<RegistryWatcher>.fromOpaque(data).takeUnretainedValue().setting(
                subject: subject, key: key.map { String(cString: $0) })
            return 0
        }
    }
}

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif
