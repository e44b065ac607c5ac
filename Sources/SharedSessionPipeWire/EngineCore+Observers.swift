internal import CPipeWire
internal import CPipeWireShim
import SharedSession

/// What the nodes, the connection and the registry tell the engine, on the loop thread: each event
/// updates what it concerns and re-arms the timer for whatever is due next.
extension EngineCore: StreamObserver {
    func stream(_ node: PipeWireStream, changedFrom old: pw_stream_state, to new: pw_stream_state, error: String?) {
        logger.debug("\(node.name): \(Self.describe(old)) -> \(Self.describe(new))\(error.map { " (\($0))" } ?? "")")
        // Every node's health follows its state, the capture and monitor nodes' too: a node that never
        // seems to start is made again. A node that starts or stops may change the graph's quantum.
        let (from, to) = (Self.health(old), Self.health(new))
        let report = node.health.changed(from: from, to: to, error: error, connectionBroken: !isConnected, at: .now)
        if from == .streaming || to == .streaming { expectQuantumChange() } else { reschedule() }
        let ids = streamIDs(of: node)
        guard !ids.isEmpty else { return }
        if StreamHealth.isNodeCreated(from: from, to: to) { _ = node.setChannelVolume(1) }
        switch report {
        case .fault(let reason): for id in ids { delivery.emit(.streamFault(stream: id, reason: reason)) }
        case .renegotiated(let paused):
            logger.info("\(node.name): renegotiated by the server, paused for \(paused)")
            for id in ids { delivery.emit(.streamRenegotiated(stream: id, paused: paused)) }
        case nil: break
        }
    }

    func stream(_ node: PipeWireStream, volumesChanged volumes: [Float]) {
        let ids = streamIDs(of: node)
        guard !ids.isEmpty else { return }
        switch node.health.volumeReport(volumes, own: node.ownVolume, at: .now) {
        case .own:
            return
        case .restored:
            logger.info("\(node.name): a volume restored by the session manager; setting 1")
        case .external(let volume):
            logger.debug("\(node.name): volume \(volume) set from outside")
            for id in ids { delivery.emit(.externalVolumeChange(stream: id, volume: volume)) }
        }
        // The change was reported (or was a restore): undo it, so PipeWire never steps our level.
        _ = node.setChannelVolume(1)
    }

    private static func describe(_ state: pw_stream_state) -> String {
        String(cString: pw_stream_state_as_string(state))
    }

    private static func health(_ state: pw_stream_state) -> StreamHealth.State {
        switch state {
        case PW_STREAM_STATE_STREAMING: .streaming
        case PW_STREAM_STATE_PAUSED: .paused
        case PW_STREAM_STATE_CONNECTING: .connecting
        case PW_STREAM_STATE_ERROR: .error
        default: .unconnected
        }
    }
}

extension EngineCore: CoreConnectionObserver {
    func nodeAdded(id: UInt32, mediaClass: String, name: String) {
        if !adoption.defersOtherAudio(id: id, mediaClass: mediaClass, name: name) {
            for event in graph.nodeAdded(id: id, mediaClass: mediaClass, name: name) { delivery.emit(event) }
        }
        echo.nodeAppeared(named: name)
        expectQuantumChange()
    }

    func nodeRemoved(id: UInt32) {
        perform(adoption.removed(id, at: .now))
        for event in graph.nodeRemoved(id: id) { delivery.emit(event) }
        expectQuantumChange()
    }

    func defaultSinkChanged(to name: String?) {
        for event in graph.defaultSinkChanged(to: name) { delivery.emit(event) }
    }

    func clockSettingsChanged() {
        expectQuantumChange()
    }

    func globalAdded(
        id: UInt32, type: String, permissions: UInt32, properties: [String: String], registry: OpaquePointer
    ) {
        adopted.registry = registry
        loopbacks.globalAdded(id: id, properties: properties, registry: registry)
        if type == String(cString: CPipeWireShim_typeClient) {
            perform(adoption.clientAppeared(id, properties: properties, at: .now))
        } else if type == String(cString: CPipeWireShim_typeNode) {
            // Writing a node's Props is a method that modifies it: write and execute permission.
            let writable = permissions & 0o300 == 0o300
            if !writable, properties["node.name"]?.hasPrefix(factory.nodePrefix) != true {
                adopted.readOnlyNode = properties["node.name"] ?? "node \(id)"
            }
            if let mediaClass = properties["media.class"], AdoptionBook.isAdoptable(mediaClass: mediaClass) {
                perform(adoption.nodeAppeared(id, properties: properties, writable: writable, at: .now))
            }
        }
        reschedule()
    }

    func coreDone(seq: Int32) {
        giveBackConfirmed(upTo: seq)
    }
}
