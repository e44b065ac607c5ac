/// The whole observable state of a session at one moment.
public struct SessionSnapshot: Sendable, Hashable {
    /// The configuration the engine has active, or `nil` when the session is inactive.
    public let activeConfiguration: SessionConfiguration?
    /// Every live session lease, oldest first.
    public let leases: [LeaseInfo]
    /// Every live duck or pause lease, oldest first.
    public let ducks: [DuckInfo]
    /// The host's own volume for the main stream.
    public let mainVolume: Float
    /// The factor ducking applies to the host's volume (1 when not ducked).
    public let duckFactor: Float
    /// The gain the main stream is told to reach: host volume × duck factor, or 0 while muted.
    public let mainGain: Float
    /// Whether the host wants the main stream to play (its own play and pause).
    public let hostWantsPlayback: Bool
    /// Whether the main stream is paused, by the host, a pause request, a route change or an interruption.
    public let isMainPaused: Bool
    /// Where an interruption stands.
    public let interruption: InterruptionPhase
    /// Whether rendering is suspended (interruption, background, `suspend`).
    public let isSuspended: Bool
    /// Whether the app is in the background.
    public let isInBackground: Bool
    /// Whether another app's audio is playing.
    public let isOtherAudioPlaying: Bool
    /// Whether secondary audio (background music, ambient loops) should be silenced.
    public let secondaryAudioShouldBeSilencedHint: Bool
    /// Whether streams marked as background music are muted.
    public let isBackgroundMusicMuted: Bool
    /// The current output, as the last route change named it.
    public let currentRoute: String?
    /// Every open stream.
    public let streams: [StreamInfo]
    /// Whether the engine is connected to its sound server.
    public let isEngineConnected: Bool
    /// The engine's render quantum as last reported (0 before a report).
    public let quantum: Int
    /// When the snapshot was taken, for lease ages.
    public let takenAt: ContinuousClock.Instant
    /// The main stream's loudness duck as the engine last reported it (its depth, the two
    /// loudnesses); `nil` while none is set.
    public let loudnessDuck: LoudnessDuckReading?

    /// A snapshot of these values (`package`: SharedSessionRecording reads one back from its JSON form).
    package init(
        activeConfiguration: SessionConfiguration?, leases: [LeaseInfo], ducks: [DuckInfo], mainVolume: Float,
        duckFactor: Float, mainGain: Float, hostWantsPlayback: Bool, isMainPaused: Bool,
        interruption: InterruptionPhase, isSuspended: Bool, isInBackground: Bool, isOtherAudioPlaying: Bool,
        secondaryAudioShouldBeSilencedHint: Bool, isBackgroundMusicMuted: Bool, currentRoute: String?,
        streams: [StreamInfo], isEngineConnected: Bool, quantum: Int, takenAt: ContinuousClock.Instant,
        loudnessDuck: LoudnessDuckReading? = nil
    ) {
        self.activeConfiguration = activeConfiguration
        self.leases = leases
        self.ducks = ducks
        self.mainVolume = mainVolume
        self.duckFactor = duckFactor
        self.mainGain = mainGain
        self.hostWantsPlayback = hostWantsPlayback
        self.isMainPaused = isMainPaused
        self.interruption = interruption
        self.isSuspended = isSuspended
        self.isInBackground = isInBackground
        self.isOtherAudioPlaying = isOtherAudioPlaying
        self.secondaryAudioShouldBeSilencedHint = secondaryAudioShouldBeSilencedHint
        self.isBackgroundMusicMuted = isBackgroundMusicMuted
        self.currentRoute = currentRoute
        self.streams = streams
        self.isEngineConnected = isEngineConnected
        self.quantum = quantum
        self.takenAt = takenAt
        self.loudnessDuck = loudnessDuck
    }

    /// Whether the session is active.
    public var isActive: Bool { activeConfiguration != nil }
    /// Whether an interruption is in progress.
    public var isInterrupted: Bool { interruption == .interrupted }
    /// Whether the main stream is ducked.
    public var isDucked: Bool { duckFactor < 1 }
    /// Live generic leases.
    public var genericCount: Int { leases.count { $0.type == .generic } }
    /// Live voice leases.
    public var voiceCount: Int { leases.count { $0.type == .voice } }
    /// The owners holding session leases, one entry per lease.
    public var owners: [String] { leases.map(\.owner) }
    /// How long a lease has been held at the time of the snapshot.
    public func age(of lease: LeaseInfo) -> Duration { takenAt - lease.acquiredAt }
    /// How long a duck or pause request has been held at the time of the snapshot.
    public func age(of duck: DuckInfo) -> Duration { takenAt - duck.acquiredAt }
    /// How long until a duck or pause request's deadline releases it; `nil` without a deadline.
    public func timeLeft(of duck: DuckInfo) -> Duration? { duck.deadline.map { $0 - takenAt } }

    /// "Who is ducking the movie, since when": one line per live duck or pause request, with its owner,
    /// what it asks, its age and its deadline.
    public var duckReport: [String] {
        ducks.map { duck in
            var line = "\(duck.owner): \(duck.style), held \(age(of: duck))"
            if let left = timeLeft(of: duck) { line += ", released in \(left)" }
            if !duck.appliedLimits.isEmpty {
                line += " (limited: \(duck.appliedLimits.map(\.description).joined(separator: ", ")))"
            }
            return line
        }
    }
}
