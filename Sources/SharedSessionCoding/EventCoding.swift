public import SharedSession

// The JSON forms of a session's events and of the leases and streams they carry, each given once
// (see ``JSONForm``). Instants are seconds from the recording's start (see ``RecordingTimeOrigin``).

extension LeaseInfo: Codable, RecordedField {
    /// Reads `{"id", "owner", "type", "acquiredAt"}`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"id", "owner", "type", "acquiredAt"}`.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "lease", "id", "owner", "type", "acquiredAt", make: Self.init(id:owner:type:acquiredAt:),
        parts: { ($0.id, $0.owner, $0.type, $0.acquiredAt) })
}

extension DuckInfo: Codable, RecordedField {
    /// Reads `{"id", "owner", "style", "acquiredAt", "deadline", "appliedLimits"}`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"id", "owner", "style", "acquiredAt", "deadline", "appliedLimits"}`; `deadline` is left out
    /// when there is none.
    public func encode(to encoder: any Encoder) throws {
        try Self.form.encode(self, to: encoder)
        if encoder.omitsInstants {
            // Whether there is a deadline is part of what happened; when it falls is not.
            var container = encoder.container(keyedBy: JSONKey.self)
            try container.encode(deadline != nil, forKey: "hasDeadline")
        }
    }

    static let form = JSONForm<Self>(
        object: "duck", "id", "owner", "style", "acquiredAt", "deadline", Field("appliedLimits", default: []),
        make: Self.init(id:owner:style:acquiredAt:deadline:appliedLimits:),
        parts: { ($0.id, $0.owner, $0.style, $0.acquiredAt, $0.deadline, $0.appliedLimits) })
}

extension StreamInfo: Codable, RecordedField {
    /// Reads `{"id", "descriptor", "isMain", "owner", "volume", "gain", "isPaused"}`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"id", "descriptor", "isMain", "owner", "volume", "gain", "isPaused"}`.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "stream", "id", "descriptor", "isMain", "owner", "volume", "gain", "isPaused",
        make: Self.init(id:descriptor:isMain:owner:volume:gain:isPaused:),
        parts: { ($0.id, $0.descriptor, $0.isMain, $0.owner, $0.volume, $0.gain, $0.isPaused) })
}

extension SessionEvent.Kind: Codable {
    /// Reads `{"kind": "<case>", ...}` with the case's values by name: a lease's as `lease`, a duck's as
    /// `duck`, a stream's as `stream`, configurations as `configuration` (`from`/`to` for a change),
    /// volumes and gains as `from`/`to`, flags by the name of the case's label (`suspended` and
    /// `muted` for the unlabelled ones), `downtime` in seconds.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"kind": "<case>", ...}` with the case's values by name.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        kinds: "event",
        [
            .case(
                "leaseAcquired", "lease", make: Self.leaseAcquired,
                match: { if case .leaseAcquired(let info) = $0 { info } else { nil } }),
            .case(
                "leaseReleased", "lease", make: Self.leaseReleased,
                match: { if case .leaseReleased(let info) = $0 { info } else { nil } }),
            .case(
                "leaseDropped", "lease", make: Self.leaseDropped,
                match: { if case .leaseDropped(let info) = $0 { info } else { nil } }),
            .case(
                "duckAcquired", "duck", make: Self.duckAcquired,
                match: { if case .duckAcquired(let info) = $0 { info } else { nil } }),
            .case(
                "duckReleased", "duck", make: Self.duckReleased,
                match: { if case .duckReleased(let info) = $0 { info } else { nil } }),
            .case(
                "duckDropped", "duck", make: Self.duckDropped,
                match: { if case .duckDropped(let info) = $0 { info } else { nil } }),
            .case(
                "releaseIgnored", "owner", "what", make: Self.releaseIgnored,
                match: { if case .releaseIgnored(let owner, let what) = $0 { (owner, what) } else { nil } }),
            .case(
                "activated", "configuration", make: Self.activated,
                match: { if case .activated(let configuration) = $0 { configuration } else { nil } }),
            .case(
                "configurationChanged", "from", "to", make: Self.configurationChanged,
                match: { if case .configurationChanged(let from, let to) = $0 { (from, to) } else { nil } }),
            .case(
                "deactivated", "notifiedOthers", make: Self.deactivated,
                match: { if case .deactivated(let notified) = $0 { notified } else { nil } }),
            .case(
                "activationFailed", "configuration", "message", make: Self.activationFailed,
                match: {
                    if case .activationFailed(let configuration, let message) = $0 {
                        (configuration, message)
                    } else {
                        nil
                    }
                }),
            .case(
                "mainVolumeChanged", "from", "to", make: Self.mainVolumeChanged,
                match: { if case .mainVolumeChanged(let from, let to) = $0 { (from, to) } else { nil } }),
            .case(
                "mainGainChanged", "from", "to", make: Self.mainGainChanged,
                match: { if case .mainGainChanged(let from, let to) = $0 { (from, to) } else { nil } }),
            .case(
                "mainPlaybackChanged", "isPaused", make: Self.mainPlaybackChanged,
                match: { if case .mainPlaybackChanged(let paused) = $0 { paused } else { nil } }),
            .case("interruptionBegan", .interruptionBegan),
            .case(
                "interruptionEnded", "shouldResume", make: Self.interruptionEnded,
                match: { if case .interruptionEnded(let resume) = $0 { resume } else { nil } }),
            .case(
                "routeChanged", "route", make: Self.routeChanged,
                match: { if case .routeChanged(let route) = $0 { route } else { nil } }),
            .case(
                "renderingSuspended", "suspended", make: Self.renderingSuspended,
                match: { if case .renderingSuspended(let suspended) = $0 { suspended } else { nil } }),
            .case(
                "backgroundChanged", "isInBackground", make: Self.backgroundChanged,
                match: { if case .backgroundChanged(let background) = $0 { background } else { nil } }),
            .case(
                "otherAudioChanged", "isPlaying", make: Self.otherAudioChanged,
                match: { if case .otherAudioChanged(let playing) = $0 { playing } else { nil } }),
            .case(
                "backgroundMusicMuted", "muted", make: Self.backgroundMusicMuted,
                match: { if case .backgroundMusicMuted(let muted) = $0 { muted } else { nil } }),
            .case(
                "streamOpened", "stream", make: Self.streamOpened,
                match: { if case .streamOpened(let info) = $0 { info } else { nil } }),
            .case(
                "streamClosed", "stream", make: Self.streamClosed,
                match: { if case .streamClosed(let info) = $0 { info } else { nil } }),
            .case(
                "streamVolumeChanged", "stream", "from", "to", make: Self.streamVolumeChanged,
                match: { if case .streamVolumeChanged(let id, let from, let to) = $0 { (id, from, to) } else { nil } }),
            .case(
                "streamFault", "stream", "reason", make: Self.streamFault,
                match: { if case .streamFault(let id, let reason) = $0 { (id, reason) } else { nil } }),
            .case(
                "connectionLost", "reason", make: Self.connectionLost,
                match: { if case .connectionLost(let reason) = $0 { reason } else { nil } }),
            .case(
                "reconnected", "attempts", "downtime", make: Self.reconnected,
                match: { if case .reconnected(let attempts, let downtime) = $0 { (attempts, downtime) } else { nil } }),
            .case(
                "quantumChanged", "frames", make: Self.quantumChanged,
                match: { if case .quantumChanged(let frames) = $0 { frames } else { nil } }),
            .case(
                "outputLatencyChanged", "stream", "from", "to", make: Self.outputLatencyChanged,
                match: {
                    if case .outputLatencyChanged(let id, let from, let to) = $0 { (id, from, to) } else { nil }
                }),
            .case(
                "outputLatencyRejected", "stream", "reason", make: Self.outputLatencyRejected,
                match: { if case .outputLatencyRejected(let id, let reason) = $0 { (id, reason) } else { nil } }),
            .case(
                "streamRenegotiated", "stream", "paused", make: Self.streamRenegotiated,
                match: { if case .streamRenegotiated(let id, let paused) = $0 { (id, paused) } else { nil } }),
            .case(
                "loudnessDuckChanged", "stream", "reading", make: Self.loudnessDuckChanged,
                match: { if case .loudnessDuckChanged(let id, let reading) = $0 { (id, reading) } else { nil } }),
            .case(
                "requestRejected", "error", make: Self.requestRejected,
                match: { if case .requestRejected(let error) = $0 { error } else { nil } }),
            .case(
                "limitApplied", "owner", "limit", make: Self.limitApplied,
                match: { if case .limitApplied(let owner, let limit) = $0 { (owner, limit) } else { nil } }),
            .case(
                "duckExpired", "duck", make: Self.duckExpired,
                match: { if case .duckExpired(let info) = $0 { info } else { nil } }),
            .case(
                "unitReleased", "owner", "reason", make: Self.unitReleased,
                match: { if case .unitReleased(let owner, let reason) = $0 { (owner, reason) } else { nil } }),
            .case("closed", .closed),
        ])
}

extension SessionEvent: Codable {
    /// Reads the kind's fields (see `Kind`) and `cause`, in one object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        self.init(try Kind(from: decoder), cause: try container.decode(EventCause.self, forKey: "cause"))
    }

    /// Writes the kind's fields (see `Kind`) and `cause`, in one object.
    public func encode(to encoder: any Encoder) throws {
        try kind.encode(to: encoder)
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(cause, forKey: "cause")
    }
}
