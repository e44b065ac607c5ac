internal import CPipeWire
import SharedSession

/// Makes the engine's `pw_stream` nodes with the properties each kind needs: a stream's playback node,
/// the overlay bus's node, and the capture nodes (the voice input and a sink's monitor). Every node is
/// named after the engine's prefix, so the engine never takes its own streams for other audio.
/// Call with the loop lock held.
struct NodeFactory {
    /// Prefix of every node name of this engine.
    let nodePrefix: String
    let applicationName: String
    let format: AudioFormat
    let shared: RealtimeShared

    /// The last component of the bus node's `node.name` (after the engine's node prefix).
    static let busNodeSuffix = "overlays"

    /// The `priority.session` of the sinks and sources the engine's modules make (a loopback duck's
    /// sink, the echo canceller's source): below every other node's, so the session manager never makes
    /// one of them a default, whatever the desktop's own sinks and sources declare. WirePlumber 0.4
    /// ranks a node that declares no priority at -1, 0.5 at 0: at 0 a loopback once became the default
    /// sink and source of a daemon whose only sink declared none.
    static let neverDefaultPriority = -1_000_000

    /// A stream's node of its own; `target` already checked against the daemon's sinks.
    func playback(
        core: OpaquePointer, id: StreamID, descriptor: StreamDescriptor, renderer: StreamRenderer,
        observer: any StreamObserver
    ) throws(SessionError) -> PipeWireStream {
        var properties = common(category: "Playback", role: descriptor.role.name, name: "\(id.rawValue)")
        properties.append((PW_KEY_NODE_DESCRIPTION, descriptor.name))
        // What a desktop mixer lists the stream as, under its application.
        properties.append((PW_KEY_MEDIA_NAME, descriptor.name))
        if let target = descriptor.target { properties.append((PW_KEY_TARGET_OBJECT, target)) }
        return try make(core: core, id: id, kind: .playback(renderer), name: descriptor.name, properties, observer)
    }

    /// The overlay bus's one node, which renders every overlay on `bus`.
    func bus(core: OpaquePointer, bus: OverlayBus, observer: any StreamObserver) throws(SessionError)
        -> PipeWireStream
    {
        var properties = common(category: "Playback", role: nil, name: Self.busNodeSuffix)
        properties.append((PW_KEY_NODE_DESCRIPTION, "\(applicationName) overlays"))
        return try make(core: core, id: nil, kind: .bus(bus), name: "overlay bus", properties, observer)
    }

    /// A capture node into `ring`: of the default source for ``CaptureSlot/Purpose/voice`` (or of the
    /// source `target` names: the echo canceller's), of a sink's monitor for
    /// ``CaptureSlot/Purpose/sinkMonitor`` (`target` names the sink, nil the default one).
    func capture(
        core: OpaquePointer, purpose: CaptureSlot.Purpose, ring: AudioRingBuffer, target: String?,
        observer: any StreamObserver
    ) throws(SessionError) -> PipeWireStream {
        let isVoice = purpose == .voice
        var properties = common(
            category: "Capture", role: isVoice ? "Communication" : "Production", name: isVoice ? "voice" : "monitor")
        if !isVoice { properties.append((PW_KEY_STREAM_CAPTURE_SINK, "true")) }
        // The voice's target is the echo canceller's source while it cancels (EchoCanceller).
        if let target { properties.append((PW_KEY_TARGET_OBJECT, target)) }
        return try make(
            core: core, id: nil, kind: .capture(ring), name: isVoice ? "voice capture" : "sink monitor",
            properties,
            observer)
    }

    private func common(category: String, role: String?, name: String) -> [(String, String)] {
        var properties: [(String, String)] = [(PW_KEY_MEDIA_TYPE, "Audio"), (PW_KEY_MEDIA_CATEGORY, category)]
        if let role { properties.append((PW_KEY_MEDIA_ROLE, role)) }
        properties.append((PW_KEY_NODE_NAME, "\(nodePrefix).\(name)"))
        properties.append((PW_KEY_APP_NAME, applicationName))
        return properties
    }

    private func make(
        core: OpaquePointer, id: StreamID?, kind: PipeWireStream.Kind, name: String, _ properties: [(String, String)],
        _ observer: any StreamObserver
    ) throws(SessionError) -> PipeWireStream {
        let node = try PipeWireStream(
            core: core, id: id, kind: kind, name: name, properties: properties, format: format, shared: shared)
        node.observer = observer
        return node
    }
}
