import Foundation
public import SharedSession

// The JSON forms of a session's events and of the leases and streams they carry. Instants are
// seconds from the recording's start (see ``RecordingTimeOrigin``).

extension LeaseInfo: Codable {
    /// Reads `{"id", "owner", "type", "acquiredAt"}`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        self.init(
            id: try c.decode(LeaseID.self, forKey: "id"), owner: try c.decode(String.self, forKey: "owner"),
            type: try c.decode(AudioSessionType.self, forKey: "type"),
            acquiredAt: try c.decodeInstantIfPresent(forKey: "acquiredAt", decoder)
                ?? RecordingTimeOrigin.process.instant)
    }

    /// Writes `{"id", "owner", "type", "acquiredAt"}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(id, forKey: "id")
        try c.encode(owner, forKey: "owner")
        try c.encode(type, forKey: "type")
        try c.encodeInstant(acquiredAt, forKey: "acquiredAt", encoder)
    }
}

extension DuckInfo: Codable {
    /// Reads `{"id", "owner", "style", "acquiredAt", "deadline", "appliedLimits"}`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        self.init(
            id: try c.decode(LeaseID.self, forKey: "id"), owner: try c.decode(String.self, forKey: "owner"),
            style: try c.decode(DuckStyle.self, forKey: "style"),
            acquiredAt: try c.decodeInstantIfPresent(forKey: "acquiredAt", decoder)
                ?? RecordingTimeOrigin.process.instant,
            deadline: try c.decodeInstantIfPresent(forKey: "deadline", decoder),
            appliedLimits: try c.decodeIfPresent([UnitLimit].self, forKey: "appliedLimits") ?? [])
    }

    /// Writes `{"id", "owner", "style", "acquiredAt", "deadline", "appliedLimits"}`; `deadline` is left out
    /// when there is none.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(id, forKey: "id")
        try c.encode(owner, forKey: "owner")
        try c.encode(style, forKey: "style")
        try c.encodeInstant(acquiredAt, forKey: "acquiredAt", encoder)
        if encoder.userInfo[.sessionRecordingOmitsInstants] as? Bool == true {
            // Whether there is a deadline is part of what happened; when it falls is not.
            try c.encode(deadline != nil, forKey: "hasDeadline")
        } else {
            try c.encodeInstant(deadline, forKey: "deadline", encoder)
        }
        try c.encode(appliedLimits, forKey: "appliedLimits")
    }
}

extension StreamInfo: Codable {
    /// Reads `{"id", "descriptor", "isMain", "owner", "volume", "gain", "isPaused"}`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        self.init(
            id: try c.decode(StreamID.self, forKey: "id"),
            descriptor: try c.decode(StreamDescriptor.self, forKey: "descriptor"),
            isMain: try c.decode(Bool.self, forKey: "isMain"),
            owner: try c.decodeIfPresent(String.self, forKey: "owner"),
            volume: try c.decode(Float.self, forKey: "volume"), gain: try c.decode(Float.self, forKey: "gain"),
            isPaused: try c.decode(Bool.self, forKey: "isPaused"))
    }

    /// Writes `{"id", "descriptor", "isMain", "owner", "volume", "gain", "isPaused"}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(id, forKey: "id")
        try c.encode(descriptor, forKey: "descriptor")
        try c.encode(isMain, forKey: "isMain")
        try c.encodeIfPresent(owner, forKey: "owner")
        try c.encode(volume, forKey: "volume")
        try c.encode(gain, forKey: "gain")
        try c.encode(isPaused, forKey: "isPaused")
    }
}

extension SessionEvent.Kind: Codable {
    /// Reads `{"kind": "<case>", ...}` with the case's values by name: a lease's as `lease`, a duck's as
    /// `duck`, a stream's as `stream`, configurations as `configuration` (`from`/`to` for a change),
    /// volumes and gains as `from`/`to`, flags by the name of the case's label (`suspended` and
    /// `muted` for the unlabelled ones), `downtime` in seconds.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        func lease() throws -> LeaseInfo { try c.decode(LeaseInfo.self, forKey: "lease") }
        func duck() throws -> DuckInfo { try c.decode(DuckInfo.self, forKey: "duck") }
        func stream() throws -> StreamInfo { try c.decode(StreamInfo.self, forKey: "stream") }
        func string(_ key: JSONKey) throws -> String { try c.decode(String.self, forKey: key) }
        func float(_ key: JSONKey) throws -> Float { try c.decode(Float.self, forKey: key) }
        func bool(_ key: JSONKey) throws -> Bool { try c.decode(Bool.self, forKey: key) }
        func configuration(_ key: JSONKey) throws -> SessionConfiguration {
            try c.decode(SessionConfiguration.self, forKey: key)
        }
        switch try c.decodeKind() {
        case "leaseAcquired": self = .leaseAcquired(try lease())
        case "leaseReleased": self = .leaseReleased(try lease())
        case "leaseDropped": self = .leaseDropped(try lease())
        case "duckAcquired": self = .duckAcquired(try duck())
        case "duckReleased": self = .duckReleased(try duck())
        case "duckDropped": self = .duckDropped(try duck())
        case "releaseIgnored": self = .releaseIgnored(owner: try string("owner"), what: try string("what"))
        case "activated": self = .activated(try configuration("configuration"))
        case "configurationChanged":
            self = .configurationChanged(from: try configuration("from"), to: try configuration("to"))
        case "deactivated": self = .deactivated(notifiedOthers: try bool("notifiedOthers"))
        case "activationFailed":
            self = .activationFailed(try configuration("configuration"), message: try string("message"))
        case "mainVolumeChanged": self = .mainVolumeChanged(from: try float("from"), to: try float("to"))
        case "mainGainChanged": self = .mainGainChanged(from: try float("from"), to: try float("to"))
        case "mainPlaybackChanged": self = .mainPlaybackChanged(isPaused: try bool("isPaused"))
        case "interruptionBegan": self = .interruptionBegan
        case "interruptionEnded": self = .interruptionEnded(shouldResume: try bool("shouldResume"))
        case "routeChanged": self = .routeChanged(try c.decode(RouteChange.self, forKey: "route"))
        case "renderingSuspended": self = .renderingSuspended(try bool("suspended"))
        case "backgroundChanged": self = .backgroundChanged(isInBackground: try bool("isInBackground"))
        case "otherAudioChanged": self = .otherAudioChanged(isPlaying: try bool("isPlaying"))
        case "backgroundMusicMuted": self = .backgroundMusicMuted(try bool("muted"))
        case "streamOpened": self = .streamOpened(try stream())
        case "streamClosed": self = .streamClosed(try stream())
        case "streamVolumeChanged":
            self = .streamVolumeChanged(
                try c.decode(StreamID.self, forKey: "stream"), from: try float("from"), to: try float("to"))
        case "streamFault":
            self = .streamFault(try c.decode(StreamID.self, forKey: "stream"), reason: try string("reason"))
        case "connectionLost": self = .connectionLost(reason: try string("reason"))
        case "reconnected":
            self = .reconnected(
                attempts: try c.decode(Int.self, forKey: "attempts"), downtime: try c.decodeSeconds(forKey: "downtime"))
        case "quantumChanged": self = .quantumChanged(frames: try c.decode(Int.self, forKey: "frames"))
        case "requestRejected": self = .requestRejected(try c.decode(SessionError.self, forKey: "error"))
        case "limitApplied":
            self = .limitApplied(owner: try string("owner"), limit: try c.decode(UnitLimit.self, forKey: "limit"))
        case "duckExpired": self = .duckExpired(try duck())
        case "unitReleased": self = .unitReleased(owner: try string("owner"), reason: try string("reason"))
        case "closed": self = .closed
        case let kind: throw c.unknownKind(kind, of: "event")
        }
    }

    /// Writes `{"kind": "<case>", ...}` with the case's values by name.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .leaseAcquired(let info): try Self.encode(info, "leaseAcquired", "lease", encoder)
        case .leaseReleased(let info): try Self.encode(info, "leaseReleased", "lease", encoder)
        case .leaseDropped(let info): try Self.encode(info, "leaseDropped", "lease", encoder)
        case .duckAcquired(let info): try Self.encode(info, "duckAcquired", "duck", encoder)
        case .duckReleased(let info): try Self.encode(info, "duckReleased", "duck", encoder)
        case .duckDropped(let info): try Self.encode(info, "duckDropped", "duck", encoder)
        case .duckExpired(let info): try Self.encode(info, "duckExpired", "duck", encoder)
        case .streamOpened(let info): try Self.encode(info, "streamOpened", "stream", encoder)
        case .streamClosed(let info): try Self.encode(info, "streamClosed", "stream", encoder)
        case .activated(let configuration): try Self.encode(configuration, "activated", "configuration", encoder)
        case .routeChanged(let route): try Self.encode(route, "routeChanged", "route", encoder)
        case .requestRejected(let error): try Self.encode(error, "requestRejected", "error", encoder)
        case .deactivated(let notified): try Self.encode(notified, "deactivated", "notifiedOthers", encoder)
        case .mainPlaybackChanged(let paused): try Self.encode(paused, "mainPlaybackChanged", "isPaused", encoder)
        case .interruptionEnded(let resume): try Self.encode(resume, "interruptionEnded", "shouldResume", encoder)
        case .renderingSuspended(let suspended): try Self.encode(suspended, "renderingSuspended", "suspended", encoder)
        case .backgroundChanged(let background):
            try Self.encode(background, "backgroundChanged", "isInBackground", encoder)
        case .otherAudioChanged(let playing): try Self.encode(playing, "otherAudioChanged", "isPlaying", encoder)
        case .backgroundMusicMuted(let muted): try Self.encode(muted, "backgroundMusicMuted", "muted", encoder)
        case .connectionLost(let reason): try Self.encode(reason, "connectionLost", "reason", encoder)
        case .quantumChanged(let frames): try Self.encode(frames, "quantumChanged", "frames", encoder)
        case .interruptionBegan: _ = try encoder.kindContainer("interruptionBegan")
        case .closed: _ = try encoder.kindContainer("closed")
        case .releaseIgnored(let owner, let what):
            var c = try encoder.kindContainer("releaseIgnored")
            try c.encode(owner, forKey: "owner")
            try c.encode(what, forKey: "what")
        case .configurationChanged(let from, let to):
            var c = try encoder.kindContainer("configurationChanged")
            try c.encode(from, forKey: "from")
            try c.encode(to, forKey: "to")
        case .activationFailed(let configuration, let message):
            var c = try encoder.kindContainer("activationFailed")
            try c.encode(configuration, forKey: "configuration")
            try c.encode(message, forKey: "message")
        case .mainVolumeChanged(let from, let to), .mainGainChanged(let from, let to):
            var c = try encoder.kindContainer(
                { if case .mainVolumeChanged = self { "mainVolumeChanged" } else { "mainGainChanged" } }())
            try c.encode(from, forKey: "from")
            try c.encode(to, forKey: "to")
        case .streamVolumeChanged(let id, let from, let to):
            var c = try encoder.kindContainer("streamVolumeChanged")
            try c.encode(id, forKey: "stream")
            try c.encode(from, forKey: "from")
            try c.encode(to, forKey: "to")
        case .streamFault(let id, let reason):
            var c = try encoder.kindContainer("streamFault")
            try c.encode(id, forKey: "stream")
            try c.encode(reason, forKey: "reason")
        case .reconnected(let attempts, let downtime):
            var c = try encoder.kindContainer("reconnected")
            try c.encode(attempts, forKey: "attempts")
            try c.encodeSeconds(downtime, forKey: "downtime")
        case .limitApplied(let owner, let limit):
            var c = try encoder.kindContainer("limitApplied")
            try c.encode(owner, forKey: "owner")
            try c.encode(limit, forKey: "limit")
        case .unitReleased(let owner, let reason):
            var c = try encoder.kindContainer("unitReleased")
            try c.encode(owner, forKey: "owner")
            try c.encode(reason, forKey: "reason")
        }
    }

    private static func encode(_ value: some Encodable, _ kind: String, _ key: JSONKey, _ encoder: any Encoder)
        throws
    {
        var c = try encoder.kindContainer(kind)
        try c.encode(value, forKey: key)
    }
}

extension SessionEvent: Codable {
    /// Reads the kind's fields (see ``Kind``) and `cause`, in one object.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: JSONKey.self)
        self.init(try Kind(from: decoder), cause: try c.decode(EventCause.self, forKey: "cause"))
    }

    /// Writes the kind's fields (see ``Kind``) and `cause`, in one object.
    public func encode(to encoder: any Encoder) throws {
        try kind.encode(to: encoder)
        var c = encoder.container(keyedBy: JSONKey.self)
        try c.encode(cause, forKey: "cause")
    }
}
