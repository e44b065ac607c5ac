/// The open streams and what the engine has been told for each: brings every stream's gain, play
/// state and voice-activity duck to its target with the fewest engine calls (a gain ramped down or
/// up by the policy's fades), and again in full after a reconnect.
struct StreamReconciler: Sendable {
    struct Record: Sendable, Hashable {
        let id: StreamID
        let descriptor: StreamDescriptor
        let isMain: Bool
        /// The unit that opened it, or `nil` for the host.
        let owner: String?
        var volume: Float
        /// What the engine has been told for it: the gain and play state it was last given. Kept in
        /// the record, not in a dictionary by id, so settling a stream after an input hashes nothing.
        var applied: StreamTarget

        var cause: EventCause { owner.map { .unit(owner: $0) } ?? .host }
    }

    private(set) var records: [Record] = []
    private var nextStream: UInt64 = 1

    /// The id the next stream opened gets.
    var nextID: StreamID { StreamID(rawValue: nextStream) }

    /// Where the main stream's record is, if one is open: kept as records come and go, so reading the
    /// main stream (several times per input) searches nothing. A search with a closure or a key path
    /// (`firstIndex(where: \.isMain)`) allocates its context in the unoptimised build, every input
    /// (`RealtimeRenderTests` bounds the allocations of a duck).
    private(set) var mainIndex: Int?

    var main: (id: StreamID, isExempt: Bool, isBackgroundMusic: Bool)? {
        guard let mainIndex else { return nil }
        let descriptor = records[mainIndex].descriptor
        return (records[mainIndex].id, descriptor.isExempt, descriptor.isBackgroundMusic)
    }

    var isMainExempt: Bool { mainIndex.map { records[$0].descriptor.isExempt } ?? false }

    func index(of id: StreamID) -> Int? { records.firstIndex { $0.id == id } }

    func isOpen(_ id: StreamID) -> Bool { records.contains { $0.id == id } }

    /// Spends the next id: on a stream the engine opened (``add(_:)``) or refused.
    mutating func spendID() {
        nextStream += 1
    }

    mutating func add(_ record: Record) {
        if record.isMain { mainIndex = records.count }
        records.append(record)
        spendID()
    }

    mutating func remove(at index: Int) {
        records.remove(at: index)
        guard let main = mainIndex else { return }
        mainIndex = main == index ? nil : main > index ? main - 1 : main
    }

    mutating func setVolume(_ volume: Float, at index: Int) {
        records[index].volume = volume
    }

    /// Appends the calls that bring every stream from what it was told to its target.
    mutating func settle(_ targets: StreamTargets, _ policy: SessionPolicy, _ log: inout EffectLog) {
        for index in records.indices {
            let id = records[index].id
            let current = records[index].applied
            let wanted = targets.target(for: records[index])
            if wanted.gain != current.gain {
                let ramp = wanted.gain < current.gain ? policy.fadeDown : policy.fadeUp
                log.append(.setGain(id, wanted.gain, ramp: ramp))
            }
            if wanted.paused != current.paused { log.append(.setPaused(id, wanted.paused)) }
            if wanted.activity != current.activity {
                log.append(
                    .setActivityDuck(
                        id, gain: wanted.activity?.gain ?? 1, volume: wanted.activity?.volume ?? 1,
                        following: wanted.activity?.followed ?? []))
            }
            // Stored only when it changed: most inputs (a lease, a duck at a level already applied)
            // change no stream.
            if wanted != current { records[index].applied = wanted }
        }
    }

    /// After a reconnect the engine reopened its streams from what it was last told: tell it again.
    /// A ramp, not a step: if the engine's render side kept a level other than the target across the
    /// outage, it glides there instead of clicking.
    mutating func resync(_ targets: StreamTargets, _ policy: SessionPolicy, _ log: inout EffectLog) {
        for index in records.indices {
            let wanted = targets.target(for: records[index])
            log.append(.setGain(records[index].id, wanted.gain, ramp: policy.fadeDown))
            log.append(.setPaused(records[index].id, wanted.paused))
            records[index].applied = wanted
        }
    }

    /// Closes every stream on the engine (the session closes); the records stay for the snapshot.
    func closeAll(_ log: inout EffectLog) {
        for id in records.map(\.id).sorted() { log.append(.closeStream(id)) }
    }
}

/// What a stream should have: its gain, play state and voice-activity duck.
struct StreamTarget: Sendable, Hashable {
    var gain: Float
    var paused: Bool
    /// The voice-activity duck on top of `gain`: the factor to go down by while any source is
    /// active. `nil`: none.
    var activity: ActivityDuck? = nil
}

/// A voice-activity duck as one stream's renderer applies it.
struct ActivityDuck: Sendable, Hashable {
    /// The stream's gain while a source is active: the host's volume × the duck's level. The
    /// renderer never goes above the stream's own gain, so with other ducks the lowest level wins.
    var gain: Float
    var followed: [FollowedSource]
    /// The host's volume, which scales a loudness duck's ceiling (``LoudnessFollowing/volume``).
    var volume: Float = 1
}

/// A source a voice-activity duck follows, and the loudness duck that follows it, if one does.
struct FollowedSource: Sendable, Hashable {
    var source: ActivitySource
    var loudness: LoudnessSlot? = nil
}

/// What every stream's target depends on besides the stream, read once before settling.
struct StreamTargets: Sendable {
    let main: StreamTarget
    let mutedByHand: Bool
    let backgroundMusicMuted: Bool

    func target(for stream: StreamReconciler.Record) -> StreamTarget {
        target(isMain: stream.isMain, descriptor: stream.descriptor, volume: stream.volume)
    }

    func target(isMain: Bool, descriptor: StreamDescriptor, volume: Float) -> StreamTarget {
        if isMain { return main }
        let muted = mutedByHand || (backgroundMusicMuted && descriptor.isBackgroundMusic)
        return StreamTarget(gain: muted ? 0 : volume, paused: false)
    }
}
