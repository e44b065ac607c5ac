internal import CPipeWire
internal import CPipeWireShim
import SharedSession

/// What a bound node or client of another PipeWire client tells the engine, on the loop thread.
protocol ForeignProxyObserver: AnyObject {
    func foreignNode(_ id: UInt32, info properties: [String: String]?, running: Bool)
    /// The node's `Props`: its channel volumes, the mean of its soft volumes (nil if absent) and its mute.
    func foreignNode(_ id: UInt32, volumes: [Float], soft: Float?, mute: Bool)
    func foreignClient(_ id: UInt32, info properties: [String: String])
}

/// Turns a `spa_dict` into a dictionary.
func dictionary(_ dict: UnsafePointer<spa_dict>?) -> [String: String] {
    guard let dict else { return [:] }
    var result: [String: String] = [:]
    for index in 0..<Int(dict.pointee.n_items) {
        let item = dict.pointee.items[index]
        guard let key = item.key, let value = item.value else { continue }
        result[String(cString: key)] = String(cString: value)
    }
    return result
}

/// Another client's node, bound from the registry: its info (properties, state) and its `Props`
/// (channel volumes, mute) are followed, and its `Props` written. Loop thread (or the loop lock held)
/// only; ``destroy()`` before the core goes.
final class ForeignNodeProxy {
    let id: UInt32
    private var proxy: OpaquePointer?
    private let listener = Listener(pw_node_events(), fill: ForeignNodeProxy.fillEvents)
    private unowned let observer: any ForeignProxyObserver
    /// The channel count its `Props` reported (2 until then).
    private(set) var channels: UInt32 = 2

    init?(registry: OpaquePointer, id: UInt32, observer: any ForeignProxyObserver) {
        guard let proxy = CPipeWireShim_registryBindNode(registry, id) else { return nil }
        self.id = id
        self.proxy = proxy
        self.observer = observer
        let context = Unmanaged.passUnretained(self).toOpaque()
        listener.add { _ = CPipeWireShim_nodeAddListener(proxy, $0, $1, context) }
        _ = CPipeWireShim_nodeSubscribeProps(proxy)
    }

    private static func fillEvents(_ events: UnsafeMutablePointer<pw_node_events>) {
        events.pointee.version = UInt32(PW_VERSION_NODE_EVENTS)
        events.pointee.info = { data, info in
            guard let data, let info else { return }
            let node = Unmanaged<ForeignNodeProxy>.fromOpaque(data).takeUnretainedValue()
            let changedProps = info.pointee.change_mask & UInt64(PW_NODE_CHANGE_MASK_PROPS) != 0
            node.observer.foreignNode(
                node.id, info: changedProps ? dictionary(info.pointee.props) : nil,
                running: Int32(info.pointee.state.rawValue) == CPipeWireShim_nodeStateRunning)
        }
        events.pointee.param = { data, _, paramID, _, _, pod in
            guard let data, paramID == CPipeWireShim_paramProps else { return }
            let node = Unmanaged<ForeignNodeProxy>.fromOpaque(data).takeUnretainedValue()
            var values = [Float](repeating: 0, count: 64)
            var mute: Int32 = -1
            var soft: Float = -1
            let count = CPipeWireShim_parseProps(pod, &values, 64, &soft, &mute)
            guard count > 0 else { return }
            node.channels = UInt32(count)
            node.observer.foreignNode(
                node.id, volumes: Array(values[0..<Int(count)]), soft: soft >= 0 ? soft : nil, mute: mute == 1)
        }
    }

    /// Writes every channel's soft volume (never its channel volumes: they are the user's). Returns 0
    /// or a negative errno.
    func write(soft volume: Float) -> Int32 {
        guard let proxy else { return -Int32(ENODEV) }
        return CPipeWireShim_nodeSetSoftVolumes(proxy, channels, volume)
    }

    func destroy() {
        guard let proxy else { return }
        listener.remove()
        pw_proxy_destroy(proxy)
        self.proxy = nil
    }
}

/// Another client, bound from the registry for its info: `application.process.binary` and the other
/// `application.*` properties are not in its registry global. Loop thread only.
final class ForeignClientProxy {
    let id: UInt32
    private var proxy: OpaquePointer?
    private let listener = Listener(pw_client_events()) { events in
        events.pointee.version = UInt32(PW_VERSION_CLIENT_EVENTS)
        events.pointee.info = { data, info in
            guard let data, let info else { return }
            let client = Unmanaged<ForeignClientProxy>.fromOpaque(data).takeUnretainedValue()
            client.observer.foreignClient(client.id, info: dictionary(info.pointee.props))
        }
    }
    private unowned let observer: any ForeignProxyObserver

    init?(registry: OpaquePointer, id: UInt32, observer: any ForeignProxyObserver) {
        guard let proxy = CPipeWireShim_registryBindClient(registry, id) else { return nil }
        self.id = id
        self.proxy = proxy
        self.observer = observer
        let context = Unmanaged.passUnretained(self).toOpaque()
        listener.add { _ = CPipeWireShim_clientAddListener(proxy, $0, $1, context) }
    }

    func destroy() {
        guard let proxy else { return }
        listener.remove()
        pw_proxy_destroy(proxy)
        self.proxy = nil
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
