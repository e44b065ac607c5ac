/// The duck and pause requests on the main stream: which are live, the factor they take the main
/// stream down by (the lowest live level: ducks never compound), whether one asks for a pause, the
/// voice-activity ducks, and the deadlines. A request is admitted within its unit's limits.
///
/// One record per live lease: its duck and what it asks, resolved once when it is inserted. Beside
/// them, the live fixed ducks counted per level and the pause and follow requests counted, so that
/// the factor, whether a pause is asked and whether any duck follows a source cost the same however
/// many ducks are held.
struct DuckStack: Sendable {
    /// A live lease: the duck as admitted, and what it asks of the main stream.
    private struct Record: Sendable {
        var info: DuckInfo
        var ask: Ask
    }

    /// What a live lease asks, with the policy's defaults filled in.
    private enum Ask: Sendable {
        case pause
        /// A fixed duck to this level.
        case level(Float)
        /// A duck that follows a source while it is active.
        case follow(ActivitySource, ActivityAsk)
    }

    private var records: [LeaseID: Record] = [:]
    /// Live fixed ducks per level (a duck with no level counts at the policy's).
    private var levels: [Float: Int] = [:]
    private var pauseRequests = 0
    /// Live ducks that follow a source (voice-activity and loudness ducks).
    private var followRequests = 0
    /// The host pressed play while pause requests were live; lasts until the next pause request.
    private(set) var hostOverridesPause = false

    // MARK: Reading

    /// The live duck and pause requests, oldest first.
    var ducks: [DuckInfo] { records.values.map(\.info).sorted { $0.id < $1.id } }

    func info(_ id: LeaseID) -> DuckInfo? { records[id]?.info }

    var pauseRequested: Bool { pauseRequests > 0 }

    var hasActivityDucks: Bool { followRequests > 0 }

    /// The lowest level among live ducks, and `floor` (the other-audio duck) if given.
    func factor(floor: Float? = nil) -> Float {
        var factor: Float = floor ?? 1
        for level in levels.keys { factor = min(factor, level) }
        return min(factor, 1)
    }

    /// The earliest deadline of a live duck.
    var nextDeadline: ContinuousClock.Instant? { records.values.compactMap(\.info.deadline).min() }

    /// The ducks whose deadline has come, earliest first.
    func due(at now: ContinuousClock.Instant) -> [DuckInfo] {
        let deadlines = records.compactMapValues(\.info.deadline)
        return deadlines.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
            .compactMap { records[$0.key]?.info }
    }

    /// What a duck that follows a source asks while the source is active.
    enum ActivityAsk: Sendable, Hashable {
        /// A level (a voice-activity duck).
        case level(Float)
        /// A loudness margin in LU, with the deepest depth in dB its unit's limits allow.
        case loudness(margin: Float, deepest: Float)
    }

    /// The voice-activity duck: the lowest level among the live voice-activity ducks whose source
    /// still plays (`isOpen` says whether a followed stream is open; 1 when only loudness ducks are
    /// live), and the sources to follow, oldest duck first, each with the loudness margin and deepest
    /// depth if a loudness duck follows it (the largest margin and the deepest bound of those that do).
    func activityDuck(isOpen: (StreamID) -> Bool) -> (level: Float, followed: [FollowedSource])? {
        guard hasActivityDucks else { return nil }
        var level: Float = 1
        var followed: [FollowedSource] = []
        for id in records.keys.sorted() {
            guard case .follow(let source, let ask) = records[id]!.ask else { continue }
            if case .stream(let stream) = source, !isOpen(stream) { continue }
            let index = followed.firstIndex { $0.source == source } ?? followed.endIndex
            if index == followed.endIndex { followed.append(FollowedSource(source: source)) }
            switch ask {
            case .level(let asked): level = min(level, asked)
            case .loudness(let margin, let deepest):
                let slot = followed[index].loudness
                followed[index].loudness = LoudnessSlot(
                    margin: max(margin, slot?.margin ?? margin), deepest: min(deepest, slot?.deepest ?? deepest))
            }
        }
        return followed.isEmpty ? nil : (level, followed)
    }

    // MARK: Admission

    /// What the session knows of its streams when it admits a request.
    struct Streams {
        /// The main stream, if open.
        var main: StreamID?
        var mainIsExempt: Bool
        /// Whether the stream a `followActivity(.stream(_))` request follows is open.
        var followedIsOpen: Bool
    }

    /// A request its unit's limits admit: the duck it becomes once the state gives it its id.
    struct Admission {
        var owner: String
        var style: DuckStyle
        var acquiredAt: ContinuousClock.Instant
        var deadline: ContinuousClock.Instant?
        var appliedLimits: [UnitLimit]

        /// The duck, with the id the state gave it.
        func duck(_ id: LeaseID) -> DuckInfo {
            DuckInfo(
                id: id, owner: owner, style: style, acquiredAt: acquiredAt, deadline: deadline,
                appliedLimits: appliedLimits)
        }
    }

    /// Checks a request against its unit's limits: the duck to add (as the limits allow it, with the
    /// limits that applied), or the error when a limit refuses it or it follows a stream not open.
    static func admit(
        _ request: DuckRequest, at now: ContinuousClock.Instant, policy: SessionPolicy, streams: Streams
    ) -> Result<Admission, SessionError> {
        let owner = request.owner
        let limits = policy.limits(for: owner)
        var style = request.style
        var applied: [UnitLimit] = []
        func refuse(_ limit: UnitLimit, _ fix: String) -> Result<Admission, SessionError> {
            .failure(
                SessionError(
                    code: .limitExceeded,
                    message: "\(owner) asked for \(request.style) beyond its limit (\(limit)): \(fix)"))
        }
        if case .stream(let followed)? = style.followedSource, !streams.followedIsOpen {
            return .failure(
                SessionError(
                    code: .unknownStream,
                    message: "\(owner) asked to duck while \(followed) is active, but it is not open: open the "
                        + "stream first, or follow .voiceInput"))
        }
        if style == .pause, !limits.mayPauseMain {
            if limits.excess == .refuse {
                return refuse(.mayNotPauseMain, "ask for a duck instead, or change the host's SessionPolicy.unitLimits")
            }
            style = .duck(level: max(policy.duckLevel, limits.deepestDuckLevel))
            applied.append(.mayNotPauseMain)
        }
        if case .some(let level) = style.requestedLevel, (level ?? policy.duckLevel) < limits.deepestDuckLevel {
            let deepest = limits.deepestDuckLevel
            if limits.excess == .refuse {
                return refuse(.deepestDuckLevel(deepest), "ask for a level of \(deepest) or more")
            }
            switch style {
            case .followActivity(let source, _): style = .followActivity(source, level: deepest)
            default: style = .duck(level: deepest)
            }
            applied.append(.deepestDuckLevel(deepest))
        }
        // A loudness duck asks for no level: its unit's deepest level bounds its depth. The limit is
        // applied (and named) when it is shallower than the policy's bound, whatever `excess` says,
        // since nothing was asked beyond it.
        if case .followLoudness = style, limits.deepestDuckLevel > 0,
            decibels(limits.deepestDuckLevel) > policy.loudnessDuck.deepest
        {
            applied.append(.deepestDuckLevel(limits.deepestDuckLevel))
        }
        var hold = request.maximumHold
        if let maximum = limits.maximumHold, hold.map({ $0 > maximum }) ?? true {
            hold = maximum
            applied.append(.maximumHold(maximum))
        }
        if streams.mainIsExempt, let main = streams.main { applied.append(.exemptStream(main)) }
        return .success(
            Admission(
                owner: owner, style: style, acquiredAt: now, deadline: hold.map { now + $0 }, appliedLimits: applied))
    }

    // MARK: Changes

    /// Adds an admitted duck; `policyLevel` is the level of a duck that names none, `loudness` gives
    /// a loudness duck's margin when it names none, and its bounds.
    mutating func insert(_ info: DuckInfo, policyLevel: Float, loudness: LoudnessDuckPolicy = .default) {
        let ask: Ask
        switch info.style {
        case .pause:
            hostOverridesPause = false
            pauseRequests += 1
            ask = .pause
        case .duck(let level):
            levels[level ?? policyLevel, default: 0] += 1
            ask = .level(level ?? policyLevel)
        case .followActivity(let source, let level):
            followRequests += 1
            ask = .follow(source, .level(level ?? policyLevel))
        case .followLoudness(let stream, let margin):
            var deepest = loudness.deepest
            for case .deepestDuckLevel(let level) in info.appliedLimits { deepest = max(deepest, decibels(level)) }
            followRequests += 1
            ask = .follow(.stream(stream), .loudness(margin: margin ?? loudness.margin, deepest: deepest))
        }
        records[info.id] = Record(info: info, ask: ask)
    }

    /// Removes a live duck; returns it if it was live.
    @discardableResult
    mutating func remove(_ id: LeaseID) -> DuckInfo? {
        guard let record = records.removeValue(forKey: id) else { return nil }
        switch record.ask {
        case .pause:
            pauseRequests -= 1
        case .level(let level):
            let remaining = levels[level, default: 1] - 1
            levels[level] = remaining > 0 ? remaining : nil
        case .follow:
            followRequests -= 1
        }
        if !pauseRequested { hostOverridesPause = false }
        return record.info
    }

    /// The host pressed play: a live pause request is overridden until the next one.
    mutating func hostPressedPlay() {
        if pauseRequested { hostOverridesPause = true }
    }
}
