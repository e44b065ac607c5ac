package import SharedSession

/// What the PipeWire graph means to the session: other clients' playback (other audio), the sinks and
/// which one is the default (the route), turned into the engine events the session understands.
///
/// The registry and metadata callbacks feed it what the daemon said; it returns the events to emit.
/// A plain value, tested without a daemon.
package struct GraphTracker: Sendable {
    /// Prefix of every node name of this engine: its own streams are never other audio.
    package let ownPrefix: String
    private var otherPlayback: Set<UInt32> = []
    /// The sinks by node id.
    package private(set) var sinks: [UInt32: String] = [:]
    /// The default sink, as the "default" metadata says.
    package private(set) var defaultSink: String?
    private var defaultSinkKnown = false

    package init(ownPrefix: String) {
        self.ownPrefix = ownPrefix
    }

    /// The names of the sinks, sorted: for messages.
    package var sinkNames: [String] { sinks.values.sorted() }

    package func hasSink(named name: String) -> Bool { sinks.values.contains(name) }

    /// A node appeared: another client's playback stream starts other audio (for the first one), a
    /// sink is remembered.
    package mutating func nodeAdded(id: UInt32, mediaClass: String, name: String) -> [EngineEvent] {
        if mediaClass == "Stream/Output/Audio", !name.hasPrefix(ownPrefix) {
            let wasEmpty = otherPlayback.isEmpty
            otherPlayback.insert(id)
            return wasEmpty ? [.system(.otherAudioStarted)] : []
        }
        if mediaClass == "Audio/Sink" { sinks[id] = name }
        return []
    }

    /// A node became a member of the session (an adopted node): it is no longer other audio.
    package mutating func nodeAdopted(id: UInt32) -> [EngineEvent] {
        guard otherPlayback.remove(id) != nil, otherPlayback.isEmpty else { return [] }
        return [.system(.otherAudioStopped)]
    }

    /// A node went away: the last other playback stream ends other audio; the default sink going
    /// away is the route's old device becoming unavailable.
    package mutating func nodeRemoved(id: UInt32) -> [EngineEvent] {
        var events: [EngineEvent] = []
        if otherPlayback.remove(id) != nil, otherPlayback.isEmpty { events.append(.system(.otherAudioStopped)) }
        if let name = sinks.removeValue(forKey: id), name == defaultSink {
            // Our streams follow the default sink, so this is the output they were playing to.
            events.append(.system(.routeChanged(RouteChange(reason: .oldDeviceUnavailable, previousOutput: name))))
        }
        return events
    }

    /// The default sink changed: a route change, except for the first value a connection learns.
    package mutating func defaultSinkChanged(to name: String?) -> [EngineEvent] {
        defer {
            defaultSink = name
            defaultSinkKnown = true
        }
        guard defaultSinkKnown, name != defaultSink, name != nil else { return [] }
        return [
            .system(
                .routeChanged(
                    RouteChange(reason: .routeConfigurationChange, previousOutput: defaultSink, currentOutput: name)))
        ]
    }

    /// The connection went away: nothing of the old graph is known any more, and no other client can
    /// be heard through it.
    package mutating func disconnected() -> [EngineEvent] {
        sinks.removeAll()
        guard !otherPlayback.isEmpty else { return [] }
        otherPlayback.removeAll()
        return [.system(.otherAudioStopped)]
    }
}
