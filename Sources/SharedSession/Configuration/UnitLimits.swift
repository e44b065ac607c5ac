/// What the host lets one embedded unit ask for: how deep it may duck the main stream, whether it
/// may pause it instead, whether it may take the voice session, and how long it may hold a duck.
///
/// Set per owner name in ``SessionPolicy/unitLimits`` (with ``SessionPolicy/defaultUnitLimits`` for
/// every other unit). A request beyond a limit is granted within the limit or refused, as
/// ``excess`` says, and a `limitApplied` event (or a `requestRejected` one with code `limitExceeded`)
/// names the limit: never silently.
public struct UnitLimits: Sendable, Hashable {
    /// What happens to a request beyond a limit.
    public enum Excess: Sendable, Hashable {
        /// Granted within the limit: a duck at the deepest level allowed, a duck instead of a pause, a
        /// generic session instead of a voice one, a deadline at the longest hold allowed.
        case grantWithinLimit
        /// Refused with a `SessionError` of code `limitExceeded`; nothing held changes.
        case refuse
    }

    /// The lowest duck level the unit may ask for, 0 through 1 (0: any level, down to silence).
    public var deepestDuckLevel: Float
    /// Whether the unit may pause the main stream instead of ducking it.
    public var mayPauseMain: Bool
    /// Whether the unit may take the voice session (the microphone).
    public var mayTakeVoice: Bool
    /// The longest the unit may hold a duck or pause request; `nil`: no limit. When it passes, the
    /// request is released as if its holder had, with a `duckExpired` event.
    public var maximumHold: Duration?
    /// What happens to a request beyond a limit. A maximum hold is always applied as a deadline.
    public var excess: Excess

    /// Creates limits.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` if `deepestDuckLevel` is not a finite number
    ///   from 0 through 1 or `maximumHold` is not positive.
    public init(
        deepestDuckLevel: Float = 0, mayPauseMain: Bool = true, mayTakeVoice: Bool = true,
        maximumHold: Duration? = nil, excess: Excess = .grantWithinLimit
    ) throws(SessionError) {
        try SessionError.checkUnitInterval(deepestDuckLevel, name: "deepestDuckLevel")
        if let maximumHold, maximumHold <= .zero {
            throw SessionError.invalidValue(
                "maximumHold", maximumHold.inSeconds, fix: "give a positive duration, or nil for no limit")
        }
        self.deepestDuckLevel = deepestDuckLevel
        self.mayPauseMain = mayPauseMain
        self.mayTakeVoice = mayTakeVoice
        self.maximumHold = maximumHold
        self.excess = excess
    }

    /// No limit at all: what every unit gets unless the policy says otherwise.
    public static let unlimited = try! UnitLimits()
}

/// A limit that applied to a unit's request, as events and snapshots name it.
public enum UnitLimit: Sendable, Hashable, CustomStringConvertible {
    /// The duck asked for a level below the unit's deepest allowed level.
    case deepestDuckLevel(Float)
    /// The unit may not pause the main stream.
    case mayNotPauseMain
    /// The unit may not take the voice session.
    case mayNotTakeVoice
    /// The unit may hold a duck or pause request this long at most.
    case maximumHold(Duration)
    /// The stream the request would change is exempt from units' requests.
    case exemptStream(StreamID)

    public var description: String {
        switch self {
        case .deepestDuckLevel(let level): "deepest duck level \(level)"
        case .mayNotPauseMain: "may not pause the main stream"
        case .mayNotTakeVoice: "may not take the voice session"
        case .maximumHold(let hold): "maximum hold \(hold)"
        case .exemptStream(let id): "\(id) is exempt"
        }
    }
}
