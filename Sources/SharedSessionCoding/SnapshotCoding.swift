public import SharedSession

// The JSON form of a snapshot, given once (see ``JSONForm``): what SharedSessionRemote sends a unit
// that asks for the session's state. Instants are seconds from the encoder's origin
// (``RecordingTimeOrigin``).

extension InterruptionPhase: Codable, RecordedField {
    /// Reads `"none"`, `"interrupted"` or `"endedWaitingForHost"`.
    public init(from decoder: any Decoder) throws {
        self = try lookUp(decoder, in: [.none, .interrupted, .endedWaitingForHost], by: \.name, type: "interruption")
    }

    /// Writes the phase's name.
    public func encode(to encoder: any Encoder) throws { try encodeValue(name, encoder) }

    private var name: String {
        switch self {
        case .none: "none"
        case .interrupted: "interrupted"
        case .endedWaitingForHost: "endedWaitingForHost"
        }
    }
}

extension SessionSnapshot: Codable, RecordedField {
    /// Reads an object with one field per property of the snapshot, by the property's name;
    /// `activeConfiguration`, `currentRoute` and `loudnessDuck` may be left out (`nil`).
    public init(from decoder: any Decoder) throws { self = try Self.form.decode(from: decoder) }

    /// Writes one field per property of the snapshot, by the property's name.
    public func encode(to encoder: any Encoder) throws { try Self.form.encode(self, to: encoder) }

    static let form = JSONForm<Self>(
        object: "snapshot", "activeConfiguration", "leases", "ducks", "mainVolume", "duckFactor", "mainGain",
        "hostWantsPlayback", "isMainPaused", "interruption", "isSuspended", "isInBackground", "isOtherAudioPlaying",
        "secondaryAudioShouldBeSilencedHint", "isBackgroundMusicMuted", "currentRoute", "streams",
        "isEngineConnected", "quantum", "takenAt", "loudnessDuck",
        make: Self.init(
            activeConfiguration:leases:ducks:mainVolume:duckFactor:mainGain:hostWantsPlayback:isMainPaused:
            interruption:isSuspended:isInBackground:isOtherAudioPlaying:secondaryAudioShouldBeSilencedHint:
            isBackgroundMusicMuted:currentRoute:streams:isEngineConnected:quantum:takenAt:loudnessDuck:),
        parts: {
            (
                $0.activeConfiguration, $0.leases, $0.ducks, $0.mainVolume, $0.duckFactor, $0.mainGain,
                $0.hostWantsPlayback, $0.isMainPaused, $0.interruption, $0.isSuspended, $0.isInBackground,
                $0.isOtherAudioPlaying, $0.secondaryAudioShouldBeSilencedHint, $0.isBackgroundMusicMuted,
                $0.currentRoute, $0.streams, $0.isEngineConnected, $0.quantum, $0.takenAt, $0.loudnessDuck
            )
        })
}
