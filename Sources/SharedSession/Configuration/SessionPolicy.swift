/// The host's choices: which configurations the two session types use, how deep and how fast
/// ducking is, and what happens in the background and when other apps play.
public struct SessionPolicy: Sendable, Hashable {
    /// The configuration while only generic leases are held.
    public let genericConfiguration: SessionConfiguration
    /// The configuration while any voice lease is held.
    public let voiceConfiguration: SessionConfiguration
    /// The factor a duck applies to the host's volume when the duck names no level of its own.
    public let duckLevel: Float
    /// How long a gain takes to go down (a duck, a mute).
    public let fadeDown: Duration
    /// How long a gain takes to come back up (a restore).
    public let fadeUp: Duration
    /// Suspend rendering in the background even with `playback` and `playAndRecord` (Wwise's
    /// `AkAudioSessionBehaviorSuspendInBackground`).
    public let suspendInBackground: Bool
    /// Duck the main stream while another app's audio plays. Off by default: other audio only
    /// raises the secondary-audio hint and mutes background music.
    public let duckWhenOtherAudioPlays: Bool
    /// Tell other apps they may resume when the session deactivates.
    public let notifyOthersOnDeactivation: Bool
    /// What each unit may ask for, by owner name; units not named get ``defaultUnitLimits``.
    public let unitLimits: [String: UnitLimits]
    /// What a unit not named in ``unitLimits`` may ask for.
    public let defaultUnitLimits: UnitLimits
    /// How voice-activity ducks hear speech.
    public let voiceActivity: VoiceActivityPolicy
    /// How loudness ducks set their depth.
    public let loudnessDuck: LoudnessDuckPolicy

    /// Creates a policy.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` if `duckLevel` is not a finite number from
    ///   0 through 1 or a fade is negative or longer than ten seconds.
    public init(
        genericConfiguration: SessionConfiguration = .generic,
        voiceConfiguration: SessionConfiguration = .voice,
        duckLevel: Float = 0.1,
        fadeDown: Duration = .milliseconds(150),
        fadeUp: Duration = .milliseconds(400),
        suspendInBackground: Bool = false,
        duckWhenOtherAudioPlays: Bool = false,
        notifyOthersOnDeactivation: Bool = true,
        unitLimits: [String: UnitLimits] = [:],
        defaultUnitLimits: UnitLimits = .unlimited,
        voiceActivity: VoiceActivityPolicy = .default,
        loudnessDuck: LoudnessDuckPolicy = .default
    ) throws(SessionError) {
        try SessionError.checkUnitInterval(duckLevel, name: "duckLevel")
        try SessionError.checkFade(fadeDown, name: "fadeDown")
        try SessionError.checkFade(fadeUp, name: "fadeUp")
        self.genericConfiguration = genericConfiguration
        self.voiceConfiguration = voiceConfiguration
        self.duckLevel = duckLevel
        self.fadeDown = fadeDown
        self.fadeUp = fadeUp
        self.suspendInBackground = suspendInBackground
        self.duckWhenOtherAudioPlays = duckWhenOtherAudioPlays
        self.notifyOthersOnDeactivation = notifyOthersOnDeactivation
        self.unitLimits = unitLimits
        self.defaultUnitLimits = defaultUnitLimits
        self.voiceActivity = voiceActivity
        self.loudnessDuck = loudnessDuck
    }

    /// The limits of the unit named `owner`.
    public func limits(for owner: String) -> UnitLimits {
        unitLimits[owner] ?? defaultUnitLimits
    }

    /// Generic playback mixing with others, voice chat on playAndRecord, ducking to 0.1 (−20 dB) in
    /// 150 ms and restoring in 400 ms.
    public static let `default` = try! SessionPolicy()

    /// The configuration a session type asks for.
    public func configuration(for type: AudioSessionType) -> SessionConfiguration {
        switch type {
        case .generic: genericConfiguration
        case .voice: voiceConfiguration
        }
    }
}
