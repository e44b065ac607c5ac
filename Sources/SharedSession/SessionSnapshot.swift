/// A session lease as the snapshot shows it: enough to find a leak by name.
public struct LeaseInfo: Sendable, Hashable, CustomStringConvertible {
    /// The lease's id.
    public let id: LeaseID
    /// Who holds it.
    public let owner: String
    /// Generic or voice.
    public let type: AudioSessionType
    /// When it was acquired.
    public let acquiredAt: ContinuousClock.Instant

    public var description: String { "\(type) \(id) of \(owner)" }
}

/// What a duck lease asks of the main stream.
public enum DuckStyle: Sendable, Hashable, CustomStringConvertible {
    /// Lower the main stream to the host's volume times `level` (or the policy's level if `nil`).
    case duck(level: Float?)
    /// Pause the main stream instead of lowering it (Android's pause-when-ducked, the W3C
    /// Audio Session API's transient-solo).
    case pause

    public var description: String {
        switch self {
        case .duck(let level?): "duck to \(level)"
        case .duck(nil): "duck"
        case .pause: "pause"
        }
    }
}

/// A duck or pause lease as the snapshot shows it.
public struct DuckInfo: Sendable, Hashable, CustomStringConvertible {
    /// The lease's id.
    public let id: LeaseID
    /// Who holds it.
    public let owner: String
    /// What it asks.
    public let style: DuckStyle
    /// When it was made.
    public let acquiredAt: ContinuousClock.Instant

    public var description: String { "\(style) \(id) of \(owner)" }
}

/// An open stream as the snapshot shows it.
public struct StreamInfo: Sendable, Hashable, CustomStringConvertible {
    /// The stream's id.
    public let id: StreamID
    /// Its name, role and background-music flag.
    public let descriptor: StreamDescriptor
    /// Whether it is the main video-audio stream.
    public let isMain: Bool
    /// The unit that opened it, or `nil` for the host.
    public let owner: String?
    /// Its own volume (the host's volume for the main stream).
    public let volume: Float
    /// The gain the engine is told to reach.
    public let gain: Float
    /// Whether it is paused.
    public let isPaused: Bool

    public var description: String { "\(id) \(descriptor.name) gain \(gain)\(isPaused ? " paused" : "")" }
}

/// Where an interruption stands.
public enum InterruptionPhase: Sendable, Hashable {
    /// No interruption.
    case none
    /// An interruption is in progress: rendering is suspended.
    case interrupted
    /// An interruption ended without `shouldResume`: the main stream waits for the host's play.
    case endedWaitingForHost
}

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
}
