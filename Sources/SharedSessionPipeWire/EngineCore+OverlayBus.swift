internal import CPipeWire
import SharedSession

/// The mixed layout's overlay bus on the loop thread: which streams play through it, its one node,
/// and the events of that node reported for every overlay on it.
extension EngineCore {
    /// The streams a node plays: its own, or for the bus node every overlay on the bus.
    func streamIDs(of node: PipeWireStream) -> [StreamID] {
        if let id = node.id { return [id] }
        return node === bus.node ? bus.memberIDs : []
    }

    /// Puts a stream on the bus and makes the bus's node if it has none. Throws if the node cannot
    /// be made; the stream stays on the bus (``closeOnBus(_:)`` takes it off).
    func openOnBus(_ id: StreamID, renderer: StreamRenderer) throws(SessionError) {
        bus.add(id, renderer: renderer)
        guard bus.node == nil, let core = connection.core else { return }
        bus.node = try factory.bus(core: core, bus: bus, observer: self)
    }

    /// Takes a stream off the bus (nothing if it is not on it). It fades out over its de-click time;
    /// the housekeeping drops it and, once nothing is left, the bus's node.
    func closeOnBus(_ id: StreamID) {
        guard bus.contains(id) else { return }
        bus.remove(id)
        bus.collect()
        if bus.isEmpty { destroyBusNode() }
    }

    /// Destroys the bus's node (a disconnection, or nothing left on it); the overlays stay on the
    /// bus, with their renderers' state, for the next node.
    func destroyBusNode() {
        guard let node = bus.node else { return }
        node.destroy()
        bus.nodeDestroyed()
    }

    /// On every housekeeping: drops faded-out overlays and retired tables, reports the bus node's faults
    /// for every overlay on it, and makes the node again if it never started.
    func busHousekeeping(at now: ContinuousClock.Instant) {
        bus.collect()
        if bus.isEmpty { destroyBusNode() }
        guard let node = bus.node, let core = connection.core else { return }
        if let fault = node.health.check(at: now) {
            for id in bus.memberIDs { delivery.emit(.streamFault(stream: id, reason: fault)) }
        }
        guard node.health.shouldRelink(at: now) else { return }
        logger.info("\(node.name) \(node.health.relinkReason); making its node again")
        destroyBusNode()
        do {
            let made = try factory.bus(core: core, bus: bus, observer: self)
            made.health = node.health.relinked(at: now)
            bus.node = made
        } catch {
            for id in bus.memberIDs {
                delivery.emit(
                    .streamFault(stream: id, reason: "the overlay bus could not be made again: \(error.message)"))
            }
        }
    }
}
