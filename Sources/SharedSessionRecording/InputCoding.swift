import Foundation
public import SharedSession

// The JSON forms of what reaches a session and what it emits: every enum as
// `{"kind": "<case>", <its values by name>}`. See ``SessionRecorder``.

extension SystemEvent: Codable {
    /// Reads `{"kind": ...}` with the case's values: `interruptionEnded` has `shouldResume`,
    /// `routeChanged` has `route`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        switch try container.decodeKind() {
        case "interruptionBegan": self = .interruptionBegan
        case "interruptionEnded":
            self = .interruptionEnded(shouldResume: try container.decode(Bool.self, forKey: "shouldResume"))
        case "routeChanged": self = .routeChanged(try container.decode(RouteChange.self, forKey: "route"))
        case "didEnterBackground": self = .didEnterBackground
        case "willEnterForeground": self = .willEnterForeground
        case "otherAudioStarted": self = .otherAudioStarted
        case "otherAudioStopped": self = .otherAudioStopped
        case let kind: throw container.unknownKind(kind, of: "system event")
        }
    }

    /// Writes `{"kind": ...}` with the case's values.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .interruptionBegan: _ = try encoder.kindContainer("interruptionBegan")
        case .interruptionEnded(let shouldResume):
            var container = try encoder.kindContainer("interruptionEnded")
            try container.encode(shouldResume, forKey: "shouldResume")
        case .routeChanged(let route):
            var container = try encoder.kindContainer("routeChanged")
            try container.encode(route, forKey: "route")
        case .didEnterBackground: _ = try encoder.kindContainer("didEnterBackground")
        case .willEnterForeground: _ = try encoder.kindContainer("willEnterForeground")
        case .otherAudioStarted: _ = try encoder.kindContainer("otherAudioStarted")
        case .otherAudioStopped: _ = try encoder.kindContainer("otherAudioStopped")
        }
    }
}

extension EngineEvent: Codable {
    /// Reads `{"kind": ...}` with the case's values: `system` has `event`; `externalVolumeChange` has
    /// `stream` and `volume`; `streamFault` has `stream` and `reason`; `connectionLost` has `reason`;
    /// `reconnected` has `attempts` and `downtime` (seconds); `quantumChanged` has `frames`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        switch try container.decodeKind() {
        case "system": self = .system(try container.decode(SystemEvent.self, forKey: "event"))
        case "externalVolumeChange":
            self = .externalVolumeChange(
                stream: try container.decode(StreamID.self, forKey: "stream"),
                volume: try container.decode(Float.self, forKey: "volume"))
        case "streamFault":
            self = .streamFault(
                stream: try container.decode(StreamID.self, forKey: "stream"),
                reason: try container.decode(String.self, forKey: "reason"))
        case "connectionLost": self = .connectionLost(reason: try container.decode(String.self, forKey: "reason"))
        case "reconnected":
            self = .reconnected(
                attempts: try container.decode(Int.self, forKey: "attempts"),
                downtime: try container.decodeSeconds(forKey: "downtime"))
        case "quantumChanged": self = .quantumChanged(frames: try container.decode(Int.self, forKey: "frames"))
        case let kind: throw container.unknownKind(kind, of: "engine event")
        }
    }

    /// Writes `{"kind": ...}` with the case's values.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .system(let event):
            var container = try encoder.kindContainer("system")
            try container.encode(event, forKey: "event")
        case .externalVolumeChange(let stream, let volume):
            var container = try encoder.kindContainer("externalVolumeChange")
            try container.encode(stream, forKey: "stream")
            try container.encode(volume, forKey: "volume")
        case .streamFault(let stream, let reason):
            var container = try encoder.kindContainer("streamFault")
            try container.encode(stream, forKey: "stream")
            try container.encode(reason, forKey: "reason")
        case .connectionLost(let reason):
            var container = try encoder.kindContainer("connectionLost")
            try container.encode(reason, forKey: "reason")
        case .reconnected(let attempts, let downtime):
            var container = try encoder.kindContainer("reconnected")
            try container.encode(attempts, forKey: "attempts")
            try container.encodeSeconds(downtime, forKey: "downtime")
        case .quantumChanged(let frames):
            var container = try encoder.kindContainer("quantumChanged")
            try container.encode(frames, forKey: "frames")
        }
    }
}

extension ActivitySource: Codable {
    /// Reads `{"kind": "stream", "stream": id}` or `{"kind": "voiceInput"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        switch try container.decodeKind() {
        case "stream": self = .stream(try container.decode(StreamID.self, forKey: "stream"))
        case "voiceInput": self = .voiceInput
        case let kind: throw container.unknownKind(kind, of: "activity source")
        }
    }

    /// Writes `{"kind": "stream", "stream": id}` or `{"kind": "voiceInput"}`.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .stream(let id):
            var container = try encoder.kindContainer("stream")
            try container.encode(id, forKey: "stream")
        case .voiceInput: _ = try encoder.kindContainer("voiceInput")
        }
    }
}

extension DuckStyle: Codable {
    /// Reads `{"kind": "duck", "level": ...}`, `{"kind": "pause"}` or
    /// `{"kind": "followActivity", "source": ..., "level": ...}`; a `level` left out is the policy's.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        switch try container.decodeKind() {
        case "duck": self = .duck(level: try container.decodeIfPresent(Float.self, forKey: "level"))
        case "pause": self = .pause
        case "followActivity":
            self = .followActivity(
                try container.decode(ActivitySource.self, forKey: "source"),
                level: try container.decodeIfPresent(Float.self, forKey: "level"))
        case let kind: throw container.unknownKind(kind, of: "duck style")
        }
    }

    /// Writes `{"kind": ...}` with the case's values.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .duck(let level):
            var container = try encoder.kindContainer("duck")
            try container.encodeIfPresent(level, forKey: "level")
        case .pause: _ = try encoder.kindContainer("pause")
        case .followActivity(let source, let level):
            var container = try encoder.kindContainer("followActivity")
            try container.encode(source, forKey: "source")
            try container.encodeIfPresent(level, forKey: "level")
        }
    }
}

extension DuckRequest: Codable {
    /// Reads `{"owner", "style", "maximumHold"}`; `style` left out is a plain duck, `maximumHold`
    /// (seconds) left out is none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        self.init(
            owner: try container.decode(String.self, forKey: "owner"),
            style: try container.decodeIfPresent(DuckStyle.self, forKey: "style") ?? .duck(level: nil),
            maximumHold: try container.decodeSecondsIfPresent(forKey: "maximumHold"))
    }

    /// Writes `{"owner", "style", "maximumHold"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        try container.encode(owner, forKey: "owner")
        try container.encode(style, forKey: "style")
        try container.encodeSecondsIfPresent(maximumHold, forKey: "maximumHold")
    }
}

extension EventCause: Codable {
    /// Reads `{"kind": "sessionLease"|"duckLease", "lease", "owner"}`, `{"kind": "host"}`,
    /// `{"kind": "unit", "owner"}`, `{"kind": "system", "event"}` or `{"kind": "engine", "event"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        switch try container.decodeKind() {
        case "sessionLease":
            self = .sessionLease(
                try container.decode(LeaseID.self, forKey: "lease"),
                owner: try container.decode(String.self, forKey: "owner"))
        case "duckLease":
            self = .duckLease(
                try container.decode(LeaseID.self, forKey: "lease"),
                owner: try container.decode(String.self, forKey: "owner"))
        case "host": self = .host
        case "unit": self = .unit(owner: try container.decode(String.self, forKey: "owner"))
        case "system": self = .system(try container.decode(SystemEvent.self, forKey: "event"))
        case "engine": self = .engine(try container.decode(EngineEvent.self, forKey: "event"))
        case let kind: throw container.unknownKind(kind, of: "event cause")
        }
    }

    /// Writes `{"kind": ...}` with the case's values.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .sessionLease(let id, let owner), .duckLease(let id, let owner):
            if case .sessionLease = self {
                var container = try encoder.kindContainer("sessionLease")
                try container.encode(id, forKey: "lease")
                try container.encode(owner, forKey: "owner")
            } else {
                var container = try encoder.kindContainer("duckLease")
                try container.encode(id, forKey: "lease")
                try container.encode(owner, forKey: "owner")
            }
        case .host: _ = try encoder.kindContainer("host")
        case .unit(let owner):
            var container = try encoder.kindContainer("unit")
            try container.encode(owner, forKey: "owner")
        case .system(let event):
            var container = try encoder.kindContainer("system")
            try container.encode(event, forKey: "event")
        case .engine(let event):
            var container = try encoder.kindContainer("engine")
            try container.encode(event, forKey: "event")
        }
    }
}

extension SessionInput: Codable {
    /// Reads `{"kind": "<case>", ...}` with the case's values by name: `acquire` (`type`, `owner`,
    /// `lease`), `releaseLease` and `releaseDuck` (`lease`, `dropped`), `duck` (`request`, `lease`),
    /// `expireDeadlines`, `setMainVolume` (`volume`), `play`, `pause`, `suspend` (`renderAnyway`),
    /// `wakeFromSuspend`, `system` and `engine` (`event`), `openStream` (`descriptor`, `owner`, `volume`,
    /// `isMain`, `stream`), `openStreamRefused` (`descriptor`, `message`), `closeStream` (`stream`),
    /// `setStreamVolume` (`stream`, `volume`), `ignoredRelease` (`owner`, `what`, `cause`), `rejected`
    /// (`error`), `activationOutcome` (`configuration`, `refused`), `captureOutcome` (`refused`),
    /// `unitReleased` (`owner`, `reason`), `close`. `refused` and a stream's `owner` may be left out.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        switch try c.decodeKind() {
        case "acquire":
            self = .acquire(
                try c.decode(AudioSessionType.self, forKey: "type"), owner: try c.decode(String.self, forKey: "owner"),
                lease: try c.decode(LeaseID.self, forKey: "lease"))
        case "releaseLease":
            self = .releaseLease(
                try c.decode(LeaseID.self, forKey: "lease"), dropped: try c.decode(Bool.self, forKey: "dropped"))
        case "duck":
            self = .duck(
                try c.decode(DuckRequest.self, forKey: "request"), lease: try c.decode(LeaseID.self, forKey: "lease"))
        case "releaseDuck":
            self = .releaseDuck(
                try c.decode(LeaseID.self, forKey: "lease"), dropped: try c.decode(Bool.self, forKey: "dropped"))
        case "expireDeadlines": self = .expireDeadlines
        case "setMainVolume": self = .setMainVolume(try c.decode(Float.self, forKey: "volume"))
        case "play": self = .play
        case "pause": self = .pause
        case "suspend": self = .suspend(renderAnyway: try c.decode(Bool.self, forKey: "renderAnyway"))
        case "wakeFromSuspend": self = .wakeFromSuspend
        case "system": self = .system(try c.decode(SystemEvent.self, forKey: "event"))
        case "engine": self = .engine(try c.decode(EngineEvent.self, forKey: "event"))
        case "openStream":
            self = .openStream(
                try c.decode(StreamDescriptor.self, forKey: "descriptor"),
                owner: try c.decodeIfPresent(String.self, forKey: "owner"),
                volume: try c.decode(Float.self, forKey: "volume"), isMain: try c.decode(Bool.self, forKey: "isMain"),
                stream: try c.decode(StreamID.self, forKey: "stream"))
        case "openStreamRefused":
            self = .openStreamRefused(
                try c.decode(StreamDescriptor.self, forKey: "descriptor"),
                message: try c.decode(String.self, forKey: "message"))
        case "closeStream": self = .closeStream(try c.decode(StreamID.self, forKey: "stream"))
        case "setStreamVolume":
            self = .setStreamVolume(
                try c.decode(StreamID.self, forKey: "stream"), try c.decode(Float.self, forKey: "volume"))
        case "ignoredRelease":
            self = .ignoredRelease(
                owner: try c.decode(String.self, forKey: "owner"), what: try c.decode(String.self, forKey: "what"),
                cause: try c.decode(EventCause.self, forKey: "cause"))
        case "rejected": self = .rejected(try c.decode(SessionError.self, forKey: "error"))
        case "activationOutcome":
            self = .activationOutcome(
                try c.decode(SessionConfiguration.self, forKey: "configuration"),
                refused: try c.decodeIfPresent(String.self, forKey: "refused"))
        case "captureOutcome": self = .captureOutcome(refused: try c.decodeIfPresent(String.self, forKey: "refused"))
        case "unitReleased":
            self = .unitReleased(
                owner: try c.decode(String.self, forKey: "owner"), reason: try c.decode(String.self, forKey: "reason"))
        case "close": self = .close
        case let kind: throw c.unknownKind(kind, of: "input")
        }
    }

    /// Writes `{"kind": "<case>", ...}` with the case's values by name.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .acquire(let type, let owner, let lease):
            var c = try encoder.kindContainer("acquire")
            try c.encode(type, forKey: "type")
            try c.encode(owner, forKey: "owner")
            try c.encode(lease, forKey: "lease")
        case .releaseLease(let lease, let dropped):
            var c = try encoder.kindContainer("releaseLease")
            try c.encode(lease, forKey: "lease")
            try c.encode(dropped, forKey: "dropped")
        case .duck(let request, let lease):
            var c = try encoder.kindContainer("duck")
            try c.encode(request, forKey: "request")
            try c.encode(lease, forKey: "lease")
        case .releaseDuck(let lease, let dropped):
            var c = try encoder.kindContainer("releaseDuck")
            try c.encode(lease, forKey: "lease")
            try c.encode(dropped, forKey: "dropped")
        case .expireDeadlines: _ = try encoder.kindContainer("expireDeadlines")
        case .setMainVolume(let volume):
            var c = try encoder.kindContainer("setMainVolume")
            try c.encode(volume, forKey: "volume")
        case .play: _ = try encoder.kindContainer("play")
        case .pause: _ = try encoder.kindContainer("pause")
        case .suspend(let renderAnyway):
            var c = try encoder.kindContainer("suspend")
            try c.encode(renderAnyway, forKey: "renderAnyway")
        case .wakeFromSuspend: _ = try encoder.kindContainer("wakeFromSuspend")
        case .system(let event):
            var c = try encoder.kindContainer("system")
            try c.encode(event, forKey: "event")
        case .engine(let event):
            var c = try encoder.kindContainer("engine")
            try c.encode(event, forKey: "event")
        case .openStream(let descriptor, let owner, let volume, let isMain, let stream):
            var c = try encoder.kindContainer("openStream")
            try c.encode(descriptor, forKey: "descriptor")
            try c.encodeIfPresent(owner, forKey: "owner")
            try c.encode(volume, forKey: "volume")
            try c.encode(isMain, forKey: "isMain")
            try c.encode(stream, forKey: "stream")
        case .openStreamRefused(let descriptor, let message):
            var c = try encoder.kindContainer("openStreamRefused")
            try c.encode(descriptor, forKey: "descriptor")
            try c.encode(message, forKey: "message")
        case .closeStream(let stream):
            var c = try encoder.kindContainer("closeStream")
            try c.encode(stream, forKey: "stream")
        case .setStreamVolume(let stream, let volume):
            var c = try encoder.kindContainer("setStreamVolume")
            try c.encode(stream, forKey: "stream")
            try c.encode(volume, forKey: "volume")
        case .ignoredRelease(let owner, let what, let cause):
            var c = try encoder.kindContainer("ignoredRelease")
            try c.encode(owner, forKey: "owner")
            try c.encode(what, forKey: "what")
            try c.encode(cause, forKey: "cause")
        case .rejected(let error):
            var c = try encoder.kindContainer("rejected")
            try c.encode(error, forKey: "error")
        case .activationOutcome(let configuration, let refused):
            var c = try encoder.kindContainer("activationOutcome")
            try c.encode(configuration, forKey: "configuration")
            try c.encodeIfPresent(refused, forKey: "refused")
        case .captureOutcome(let refused):
            var c = try encoder.kindContainer("captureOutcome")
            try c.encodeIfPresent(refused, forKey: "refused")
        case .unitReleased(let owner, let reason):
            var c = try encoder.kindContainer("unitReleased")
            try c.encode(owner, forKey: "owner")
            try c.encode(reason, forKey: "reason")
        case .close: _ = try encoder.kindContainer("close")
        }
    }
}
