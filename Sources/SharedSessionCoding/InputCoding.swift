public import SharedSession

// The JSON forms of what reaches a session: every enum as `{"kind": "<case>", <its values by name>}`,
// each case given once (see ``JSONForm``): how a recording keeps them (SharedSessionRecording's
// `SessionRecorder`), and how a remote unit's requests travel.

extension SessionInput: Codable, RecordedField {
    /// Reads `{"kind": "<case>", ...}` with the case's values by name: `acquire` (`type`, `owner`,
    /// `lease`), `releaseLease` and `releaseDuck` (`lease`, `dropped`), `duck` (`request`, `lease`),
    /// `expireDeadlines`, `setMainVolume` (`volume`), `play`, `pause`, `suspend` (`renderAnyway`),
    /// `wakeFromSuspend`, `system` and `engine` (`event`), `openStream` (`descriptor`, `owner`, `volume`,
    /// `isMain`, `stream`), `openStreamRefused` (`descriptor`, `message`), `closeStream` (`stream`),
    /// `setStreamVolume` (`stream`, `volume`), `ignoredRelease` (`owner`, `what`, `cause`), `rejected`
    /// (`error`), `activationOutcome` (`configuration`, `refused`), `captureOutcome` (`refused`),
    /// `unitReleased` (`owner`, `reason`), `close`. `refused` and a stream's `owner` may be left out.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"kind": "<case>", ...}` with the case's values by name.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        kinds: "input",
        [
            .case(
                "acquire", "type", "owner", "lease",
                make: { type, owner, lease in Self(.acquire(type, owner: owner), handedOut: .lease(lease)) },
                match: {
                    if case .acquire(let type, let owner) = $0.request, let lease = $0.lease {
                        (type, owner, lease)
                    } else {
                        nil
                    }
                }),
            .request(
                .case("releaseLease", "lease", "dropped", make: SessionRequest.releaseLease) {
                    if case .releaseLease(let lease, let dropped) = $0 { (lease, dropped) } else { nil }
                }),
            .case(
                "duck", "request", "lease",
                make: { request, lease in Self(.duck(request), handedOut: lease.id.map { .lease($0) }) },
                match: {
                    if case .duck(let request) = $0.request { (request, DuckLeaseField($0.lease)) } else { nil }
                }),
            .request(
                .case("releaseDuck", "lease", "dropped", make: SessionRequest.releaseDuck) {
                    if case .releaseDuck(let lease, let dropped) = $0 { (lease, dropped) } else { nil }
                }),
            .case("expireDeadlines", Self(.expireDeadlines)),
            .request(
                .case("setMainVolume", "volume", make: SessionRequest.setMainVolume) {
                    if case .setMainVolume(let volume) = $0 { volume } else { nil }
                }),
            .case("play", Self(.play)),
            .case("pause", Self(.pause)),
            .request(
                .case("suspend", "renderAnyway", make: SessionRequest.suspend) {
                    if case .suspend(let renderAnyway) = $0 { renderAnyway } else { nil }
                }),
            .case("wakeFromSuspend", Self(.wakeFromSuspend)),
            .request(
                .case("system", "event", make: SessionRequest.system) {
                    if case .system(let event) = $0 { event } else { nil }
                }),
            .request(
                .case("engine", "event", make: SessionRequest.engine) {
                    if case .engine(let event) = $0 { event } else { nil }
                }),
            .case(
                "openStream", "descriptor", "owner", "volume", "isMain", "stream",
                make: { descriptor, owner, volume, isMain, stream in
                    Self(
                        .openStream(descriptor, owner: owner, volume: volume, isMain: isMain),
                        handedOut: .stream(stream))
                },
                match: {
                    if case .openStream(let descriptor, let owner, let volume, let isMain) = $0.request,
                        let stream = $0.stream
                    {
                        (descriptor, owner, volume, isMain, stream)
                    } else {
                        nil
                    }
                }),
            .request(
                .case("openStreamRefused", "descriptor", "message", make: SessionRequest.openStreamRefused) {
                    if case .openStreamRefused(let descriptor, let message) = $0 { (descriptor, message) } else { nil }
                }),
            .request(
                .case("closeStream", "stream", make: SessionRequest.closeStream) {
                    if case .closeStream(let stream) = $0 { stream } else { nil }
                }),
            .request(
                .case("setStreamVolume", "stream", "volume", make: SessionRequest.setStreamVolume) {
                    if case .setStreamVolume(let stream, let volume) = $0 { (stream, volume) } else { nil }
                }),
            .request(
                .case("ignoredRelease", "owner", "what", "cause", make: SessionRequest.ignoredRelease) {
                    if case .ignoredRelease(let owner, let what, let cause) = $0 { (owner, what, cause) } else { nil }
                }),
            .request(
                .case("rejected", "error", make: SessionRequest.rejected) {
                    if case .rejected(let error) = $0 { error } else { nil }
                }),
            .request(
                .case("activationOutcome", "configuration", "refused", make: SessionRequest.activationOutcome) {
                    if case .activationOutcome(let configuration, let refused) = $0 {
                        (configuration, refused)
                    } else {
                        nil
                    }
                }),
            .request(
                .case("captureOutcome", "refused", make: SessionRequest.captureOutcome) {
                    if case .captureOutcome(let refused) = $0 { refused } else { nil }
                }),
            .request(
                .case("unitReleased", "owner", "reason", make: SessionRequest.unitReleased) {
                    if case .unitReleased(let owner, let reason) = $0 { (owner, reason) } else { nil }
                }),
            .case("close", Self(.close)),
        ])
}

extension JSONForm<SessionInput>.Shape {
    /// A request that hands nothing out, in the shape of its case: `{"kind": "<case>", <its values>}`.
    static func request(_ shape: JSONForm<SessionRequest>.Shape) -> Self {
        Self(kind: shape.kind) { container, decoder in
            SessionInput(try shape.read(container, decoder))
        } write: { input, container, encoder in
            input.handedOut == nil ? try shape.write(input.request, &container, encoder) : false
        }
    }
}

/// A duck request's lease as recordings write it: its id, or 0 for a request the session refused,
/// which made none. No lease is given 0.
private struct DuckLeaseField: Codable, RecordedField {
    let id: LeaseID?

    init(_ id: LeaseID?) { self.id = id }

    init(from decoder: any Decoder) throws {
        let number = try decoder.singleValueContainer().decode(UInt64.self)
        id = number == 0 ? nil : LeaseID(rawValue: number)
    }

    func encode(to encoder: any Encoder) throws { try encodeValue(id?.rawValue ?? 0, encoder) }
}

extension SystemEvent: Codable, RecordedField {
    /// Reads `{"kind": ...}` with the case's values: `interruptionEnded` has `shouldResume`,
    /// `routeChanged` has `route`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"kind": ...}` with the case's values.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        kinds: "system event",
        [
            .case("interruptionBegan", .interruptionBegan),
            .case(
                "interruptionEnded", "shouldResume", make: Self.interruptionEnded,
                match: { if case .interruptionEnded(let resume) = $0 { resume } else { nil } }),
            .case(
                "routeChanged", "route", make: Self.routeChanged,
                match: { if case .routeChanged(let route) = $0 { route } else { nil } }),
            .case("didEnterBackground", .didEnterBackground),
            .case("willEnterForeground", .willEnterForeground),
            .case("otherAudioStarted", .otherAudioStarted),
            .case("otherAudioStopped", .otherAudioStopped),
        ])
}

extension EngineEvent: Codable, RecordedField {
    /// Reads `{"kind": ...}` with the case's values: `system` has `event`; `externalVolumeChange` has
    /// `stream` and `volume`; `streamFault` has `stream` and `reason`; `connectionLost` has `reason`;
    /// `reconnected` has `attempts` and `downtime` (seconds); `quantumChanged` has `frames`;
    /// `outputLatencyChanged` has `stream`, `from` (seconds, or null for the first) and `to`;
    /// `outputLatencyRejected` has `stream` and `reason`; `streamRenegotiated` has `stream` and `paused`
    /// (seconds); `loudnessDuckChanged` has `stream` and `reading` (null once none is set);
    /// `streamPlaying` has `stream` and `playing`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"kind": ...}` with the case's values.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        kinds: "engine event",
        [
            .case(
                "system", "event", make: Self.system,
                match: { if case .system(let event) = $0 { event } else { nil } }),
            .case(
                "externalVolumeChange", "stream", "volume", make: Self.externalVolumeChange,
                match: {
                    if case .externalVolumeChange(let stream, let volume) = $0 { (stream, volume) } else { nil }
                }),
            .case(
                "streamFault", "stream", "reason", make: Self.streamFault,
                match: { if case .streamFault(let stream, let reason) = $0 { (stream, reason) } else { nil } }),
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
                "streamPlaying", "stream", "playing", make: Self.streamPlaying,
                match: { if case .streamPlaying(let stream, let playing) = $0 { (stream, playing) } else { nil } }),
        ])
}

extension ActivitySource: Codable, RecordedField {
    /// Reads `{"kind": "stream", "stream": id}` or `{"kind": "voiceInput"}`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"kind": "stream", "stream": id}` or `{"kind": "voiceInput"}`.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        kinds: "activity source",
        [
            .case("stream", "stream", make: Self.stream, match: { if case .stream(let id) = $0 { id } else { nil } }),
            .case("voiceInput", .voiceInput),
        ])
}

extension DuckStyle: Codable, RecordedField {
    /// Reads `{"kind": "duck", "level": ...}`, `{"kind": "pause"}` or
    /// `{"kind": "followActivity", "source": ..., "level": ...}` or
    /// `{"kind": "followLoudness", "stream": ..., "margin": ...}`; a `level` or `margin` left out is the
    /// policy's.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"kind": ...}` with the case's values.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        kinds: "duck style",
        [
            .case("duck", "level", make: Self.duck, match: { if case .duck(let level) = $0 { level } else { nil } }),
            .case("pause", .pause),
            .case(
                "followActivity", "source", "level", make: Self.followActivity,
                match: { if case .followActivity(let source, let level) = $0 { (source, level) } else { nil } }),
            .case(
                "followLoudness", "stream", "margin", make: Self.followLoudness,
                match: { if case .followLoudness(let stream, let margin) = $0 { (stream, margin) } else { nil } }),
        ])
}

extension DuckRequest: Codable, RecordedField {
    /// Reads `{"owner", "style", "maximumHold"}`; `style` left out is a plain duck, `maximumHold`
    /// (seconds) left out is none.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"owner", "style", "maximumHold"}`.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "duck request", "owner", Field("style", default: .duck(level: nil)), "maximumHold",
        make: Self.init(owner:style:maximumHold:), parts: { ($0.owner, $0.style, $0.maximumHold) })
}

extension EventCause: Codable, RecordedField {
    /// Reads `{"kind": "sessionLease"|"duckLease", "lease", "owner"}`, `{"kind": "host"}`,
    /// `{"kind": "unit", "owner"}`, `{"kind": "system", "event"}` or `{"kind": "engine", "event"}`.
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes `{"kind": ...}` with the case's values.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        kinds: "event cause",
        [
            .case(
                "sessionLease", "lease", "owner", make: Self.sessionLease,
                match: { if case .sessionLease(let lease, let owner) = $0 { (lease, owner) } else { nil } }),
            .case(
                "duckLease", "lease", "owner", make: Self.duckLease,
                match: { if case .duckLease(let lease, let owner) = $0 { (lease, owner) } else { nil } }),
            .case("host", .host),
            .case("unit", "owner", make: Self.unit, match: { if case .unit(let owner) = $0 { owner } else { nil } }),
            .case(
                "system", "event", make: Self.system,
                match: { if case .system(let event) = $0 { event } else { nil } }),
            .case(
                "engine", "event", make: Self.engine,
                match: { if case .engine(let event) = $0 { event } else { nil } }),
        ])
}
