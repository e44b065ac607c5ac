import SharedSession
import SharedSessionTesting

/// The reference model the model-based test checks a session against: the documented rules of
/// sessions, ducks, unit limits, deadlines, playback, engine events, streams and close, written out
/// again over plain lists (every lease, duck and stream kept in a list and searched), with no code of
/// the session's own state. Each call on the model says what the session must then show: the events
/// it emits, in order, and every call it makes on the engine, in order (``events``, ``calls``), and
/// the snapshot it reports (read with the properties below).
struct SessionModel {
    enum Interruption: Equatable {
        case none
        /// In progress; `thenWait` if an earlier one ended without `shouldResume` and the host has not
        /// played since (semantics 16: its end will not resume either).
        case interrupted(thenWait: Bool)
        case waitingForHost
    }

    /// What a stream was told last, or should be told.
    struct Told: Equatable {
        var gain: Float
        var paused: Bool
        /// The voice-activity duck: the gain while a source is active, and the sources followed.
        var activity: (gain: Float, sources: [ActivitySource])?

        static func == (lhs: Told, rhs: Told) -> Bool {
            lhs.gain == rhs.gain && lhs.paused == rhs.paused && lhs.activity?.gain == rhs.activity?.gain
                && lhs.activity?.sources == rhs.activity?.sources
        }
    }

    struct Stream {
        let id: StreamID
        let descriptor: StreamDescriptor
        let isMain: Bool
        let owner: String?
        var volume: Float
        var told: Told
    }

    struct Lease {
        let info: LeaseInfo
        var granted: Bool
    }

    // The state: set by the calls (ModelBasedTests+ModelCalls.swift), read by the runner.
    let policy: SessionPolicy
    var now: ContinuousClock.Instant
    var leases: [Lease] = []
    var ducks: [DuckInfo] = []
    var streams: [Stream] = []
    var nextLease: UInt64 = 1
    var nextStream: UInt64 = 1
    var configuration: SessionConfiguration?
    var capturing = false
    var engineSuspended = false
    var hostVolume: Float = 1
    var hostWantsPlay = true
    var interruption = Interruption.none
    var background = false
    /// A suspension by hand: its `renderAnyway`, `nil` when not suspended.
    var manual: Bool?
    var otherAudio = false
    var route: String?
    var connected = true
    var quantum = 0
    var hostOverridesPause = false
    var closed = false

    /// The events the last calls should have emitted, in order.
    var events: [SessionEvent] = []
    /// The engine calls the last calls should have made, in order.
    var calls: [RecordingEngine.Call] = []

    init(policy: SessionPolicy, now: ContinuousClock.Instant) {
        self.policy = policy
        self.now = now
    }

    // MARK: What the rules derive

    var main: Stream? { streams.first { $0.isMain } }
    var mainIsExempt: Bool { main?.descriptor.isExempt ?? false }

    /// Voice takes precedence: one live voice lease (granted or waiting) asks for voice.
    var requested: SessionConfiguration? {
        if leases.contains(where: { $0.info.type == .voice }) { return policy.voiceConfiguration }
        return leases.isEmpty ? nil : policy.genericConfiguration
    }

    /// The lowest level among live ducks (the policy's for one that names none), and the policy's for
    /// other audio if it asks; never compounded, never above 1; 1 when the main stream is exempt.
    var duckFactor: Float {
        guard !mainIsExempt else { return 1 }
        var levels: [Float] = []
        for duck in ducks {
            if case .duck(let level) = duck.style { levels.append(level ?? policy.duckLevel) }
        }
        if policy.duckWhenOtherAudioPlays, otherAudio { levels.append(policy.duckLevel) }
        return min(levels.min() ?? 1, 1)
    }

    var pauseRequested: Bool { ducks.contains { $0.style == .pause } }

    var interrupted: Bool {
        if case .interrupted = interruption { return true }
        return false
    }

    var waitsForHost: Bool {
        switch interruption {
        case .none: false
        case .interrupted(let thenWait): thenWait
        case .waitingForHost: true
        }
    }

    var phase: InterruptionPhase {
        switch interruption {
        case .none: .none
        case .interrupted: .interrupted
        case .waitingForHost: .endedWaitingForHost
        }
    }

    var mainPaused: Bool {
        !hostWantsPlay || (pauseRequested && !hostOverridesPause && !mainIsExempt) || waitsForHost
    }

    var suspended: Bool {
        if interrupted || manual == false { return true }
        guard background else { return false }
        guard let configuration else { return true }
        return !configuration.category.rendersInBackground || policy.suspendInBackground
    }

    var backgroundMusicMuted: Bool { otherAudio && (configuration ?? policy.genericConfiguration).mixesWithOthers }

    var mutedByHand: Bool { manual == true }

    var mainGain: Float {
        if mutedByHand { return 0 }
        if backgroundMusicMuted, main?.descriptor.isBackgroundMusic == true { return 0 }
        return hostVolume * duckFactor
    }

    func isOpen(_ source: ActivitySource) -> Bool {
        switch source {
        case .voiceInput: true
        case .stream(let id): streams.contains { $0.id == id }
        }
    }

    /// The voice-activity duck on the main stream: the lowest level among the live ones whose source
    /// is open, following each such source once, oldest duck first.
    var mainActivity: (gain: Float, sources: [ActivitySource])? {
        guard !mainIsExempt else { return nil }
        var level: Float = 1
        var sources: [ActivitySource] = []
        for duck in ducks {
            guard case .followActivity(let source, let requested) = duck.style, isOpen(source) else { continue }
            level = min(level, requested ?? policy.duckLevel)
            if !sources.contains(source) { sources.append(source) }
        }
        return sources.isEmpty ? nil : (hostVolume * level, sources)
    }

    func target(_ stream: Stream) -> Told {
        if stream.isMain { return Told(gain: mainGain, paused: mainPaused, activity: mainActivity) }
        let muted = mutedByHand || (backgroundMusicMuted && stream.descriptor.isBackgroundMusic)
        return Told(gain: muted ? 0 : stream.volume, paused: false, activity: nil)
    }

    func info(_ stream: Stream) -> StreamInfo {
        let target = target(stream)
        return StreamInfo(
            id: stream.id, descriptor: stream.descriptor, isMain: stream.isMain, owner: stream.owner,
            volume: stream.isMain ? hostVolume : stream.volume, gain: target.gain, isPaused: target.paused)
    }

    /// What the engine holds: the open streams' gains and pause states (none after close).
    var engineGains: [StreamID: Float] {
        closed ? [:] : Dictionary(uniqueKeysWithValues: streams.map { ($0.id, $0.told.gain) })
    }

    var enginePaused: [StreamID: Bool] {
        closed ? [:] : Dictionary(uniqueKeysWithValues: streams.map { ($0.id, $0.told.paused) })
    }

    // MARK: The road: events of what changed, then the engine calls

    struct Observed: Equatable {
        var volume: Float
        var suspended: Bool
        var backgroundMusicMuted: Bool
        var paused: Bool
        var gain: Float
    }

    var observed: Observed {
        Observed(
            volume: hostVolume, suspended: suspended, backgroundMusicMuted: backgroundMusicMuted, paused: mainPaused,
            gain: mainGain)
    }

    mutating func emit(_ kind: SessionEvent.Kind, _ cause: EventCause) {
        events.append(SessionEvent(kind, cause: cause))
    }

    /// Runs `body`, then an event for every observable value it changed, in the documented order.
    mutating func change(_ cause: EventCause, _ body: (inout SessionModel) -> Void) {
        let before = observed
        body(&self)
        let after = observed
        if before.volume != after.volume { emit(.mainVolumeChanged(from: before.volume, to: after.volume), cause) }
        if before.suspended != after.suspended { emit(.renderingSuspended(after.suspended), cause) }
        if before.backgroundMusicMuted != after.backgroundMusicMuted {
            emit(.backgroundMusicMuted(after.backgroundMusicMuted), cause)
        }
        if before.paused != after.paused { emit(.mainPlaybackChanged(isPaused: after.paused), cause) }
        if before.gain != after.gain { emit(.mainGainChanged(from: before.gain, to: after.gain), cause) }
    }

    mutating func input(_ cause: EventCause, _ body: (inout SessionModel) -> Void) {
        change(cause, body)
        settle(cause)
    }

    /// Brings the engine to what the rules derive: the configuration (and the capture with it), then
    /// the suspension, then each stream in the order opened. Nothing after close.
    mutating func settle(_ cause: EventCause) {
        guard !closed else { return }
        if configuration != requested {
            if let wanted = requested {
                calls.append(.activate(wanted))
                if wanted.category.recordsInput, !capturing {
                    calls.append(.startCapture)
                    capturing = true
                } else if !wanted.category.recordsInput, capturing {
                    calls.append(.stopCapture)
                    capturing = false
                }
                change(cause) { model in
                    let previous = model.configuration
                    model.configuration = wanted
                    for index in model.leases.indices where !model.leases[index].granted {
                        model.leases[index].granted = true
                        let info = model.leases[index].info
                        model.emit(.leaseAcquired(info), .sessionLease(info.id, owner: info.owner))
                    }
                    if let previous {
                        model.emit(.configurationChanged(from: previous, to: wanted), cause)
                    } else {
                        model.emit(.activated(wanted), cause)
                    }
                }
            } else {
                deactivate(cause)
            }
        }
        let suspended = suspended
        if suspended != engineSuspended {
            calls.append(.setSuspended(suspended))
            engineSuspended = suspended
        }
        for index in streams.indices {
            let told = streams[index].told
            let wanted = target(streams[index])
            let id = streams[index].id
            if wanted.gain != told.gain {
                calls.append(
                    .setGain(id, gain: wanted.gain, ramp: wanted.gain < told.gain ? policy.fadeDown : policy.fadeUp))
            }
            if wanted.paused != told.paused { calls.append(.setPaused(id, paused: wanted.paused)) }
            if wanted.activity?.gain != told.activity?.gain || wanted.activity?.sources != told.activity?.sources {
                calls.append(
                    .setActivityDuck(
                        id, gain: wanted.activity?.gain ?? 1, following: wanted.activity?.sources.count ?? 0))
            }
            streams[index].told = wanted
        }
    }

    mutating func deactivate(_ cause: EventCause) {
        if capturing {
            calls.append(.stopCapture)
            capturing = false
        }
        calls.append(.deactivate(notifyingOthers: policy.notifyOthersOnDeactivation))
        change(cause) { model in
            model.configuration = nil
            model.emit(.deactivated(notifiedOthers: model.policy.notifyOthersOnDeactivation), cause)
        }
    }

    mutating func takeID() -> LeaseID {
        defer { nextLease += 1 }
        return LeaseID(rawValue: nextLease)
    }
}
