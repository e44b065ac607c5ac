import Testing

@testable import SharedSession

/// The duck stack alone: requests admitted within their unit's limits, the factor and pause request
/// they make, deadlines. No engine, no streams.
@Suite("DuckStack: requests → duck factor, pause, deadlines")
struct DuckStackTests {
    static let t0 = ContinuousClock.now
    static let none = DuckStack.Streams(main: StreamID(rawValue: 1), mainIsExempt: false, followedIsOpen: true)

    static func admit(
        _ style: DuckStyle, id: UInt64 = 1, hold: Duration? = nil, policy: SessionPolicy = .default,
        streams: DuckStack.Streams = none
    ) -> Result<DuckInfo, SessionError> {
        DuckStack.admit(
            DuckRequest(owner: "feed", style: style, maximumHold: hold), at: t0, policy: policy, streams: streams
        ).map { $0.duck(LeaseID(rawValue: id)) }
    }

    @Test("ducks never compound: the factor is the lowest live level, and 1 when none is live")
    func lowestLevelWins() throws {
        var stack = DuckStack()
        let deep = try Self.admit(.duck(level: 0.25), id: 1).get()
        let shallow = try Self.admit(.duck(level: 0.5), id: 2).get()
        let policyLevel = try Self.admit(.duck(level: nil), id: 3).get()
        stack.insert(deep, policyLevel: 0.1)
        stack.insert(shallow, policyLevel: 0.1)
        #expect(stack.factor() == 0.25)
        stack.insert(policyLevel, policyLevel: 0.1)
        #expect(stack.factor() == 0.1)
        stack.remove(policyLevel.id)
        stack.remove(deep.id)
        #expect(stack.factor() == 0.5)
        #expect(stack.factor(floor: 0.1) == 0.1)
        stack.remove(shallow.id)
        #expect(stack.factor() == 1)
        #expect(stack.ducks.isEmpty)
    }

    @Test("a unit over its deepest level is granted within it, and the limit is named")
    func deepestLevelGrantedWithin() throws {
        let limits = try UnitLimits(deepestDuckLevel: 0.3)
        let policy = try SessionPolicy(unitLimits: ["feed": limits])
        let info = try Self.admit(.duck(level: 0.05), policy: policy).get()
        #expect(info.style == .duck(level: 0.3))
        #expect(info.appliedLimits == [.deepestDuckLevel(0.3)])
    }

    @Test("a unit that may not pause is refused when its limits say refuse, with the limit in the message")
    func pauseRefused() throws {
        let limits = try UnitLimits(mayPauseMain: false, excess: .refuse)
        let policy = try SessionPolicy(unitLimits: ["feed": limits])
        let error = try #require(Self.admit(.pause, policy: policy).failure)
        #expect(error.code == .limitExceeded)
        #expect(error.message.contains("may not pause the main stream"))
    }

    @Test("following a stream that is not open is refused as an unknown stream")
    func followingClosedStream() throws {
        let streams = DuckStack.Streams(main: nil, mainIsExempt: false, followedIsOpen: false)
        let error = try #require(
            Self.admit(.followActivity(.stream(StreamID(rawValue: 9)), level: nil), streams: streams).failure)
        #expect(error.code == .unknownStream)
    }

    @Test("a pause request overrides nothing until the host presses play; the next request lifts that")
    func hostOverridesPauseUntilNextRequest() throws {
        var stack = DuckStack()
        stack.insert(try Self.admit(.pause, id: 1).get(), policyLevel: 0.1)
        #expect(stack.pauseRequested && !stack.hostOverridesPause)
        stack.hostPressedPlay()
        #expect(stack.hostOverridesPause)
        stack.insert(try Self.admit(.pause, id: 2).get(), policyLevel: 0.1)
        #expect(!stack.hostOverridesPause)
        stack.hostPressedPlay()
        stack.remove(LeaseID(rawValue: 1))
        stack.remove(LeaseID(rawValue: 2))
        #expect(!stack.pauseRequested && !stack.hostOverridesPause)
    }

    @Test("deadlines: the earliest is next, and the due ones come earliest first")
    func deadlinesInOrder() throws {
        var stack = DuckStack()
        stack.insert(try Self.admit(.duck(level: nil), id: 1, hold: .seconds(2)).get(), policyLevel: 0.1)
        stack.insert(try Self.admit(.duck(level: nil), id: 2, hold: .seconds(1)).get(), policyLevel: 0.1)
        stack.insert(try Self.admit(.duck(level: nil), id: 3).get(), policyLevel: 0.1)
        #expect(stack.nextDeadline == Self.t0 + .seconds(1))
        #expect(stack.due(at: Self.t0 + .milliseconds(999)).isEmpty)
        #expect(stack.due(at: Self.t0 + .seconds(5)).map(\.id.rawValue) == [2, 1])
    }

    @Test("voice-activity ducks: the lowest level of those whose stream is open, sources oldest first")
    func activityDucks() throws {
        var stack = DuckStack()
        let far = StreamID(rawValue: 4)
        let gone = StreamID(rawValue: 5)
        stack.insert(try Self.admit(.followActivity(.stream(far), level: 0.3), id: 1).get(), policyLevel: 0.1)
        stack.insert(try Self.admit(.followActivity(.stream(gone), level: 0.05), id: 2).get(), policyLevel: 0.1)
        stack.insert(try Self.admit(.followActivity(.voiceInput, level: nil), id: 3).get(), policyLevel: 0.2)
        let duck = try #require(stack.activityDuck(isOpen: { $0 == far }))
        #expect(duck.level == 0.2)
        #expect(duck.followed.map(\.source) == [.stream(far), .voiceInput])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
