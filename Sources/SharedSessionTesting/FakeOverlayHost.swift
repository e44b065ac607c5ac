public import SharedSession

/// A host app in a box, for SDK authors who have none at hand: an `OverlayAudioDelegate` that
/// records every call the SDK makes, behaves as the contract says a host behaves, and at the end of a
/// test says by name which calls were left open.
///
/// Hand it to your SDK where the host's delegate would go, drive the SDK, then call
/// ``verifyBalanced()``: it throws an ``Unbalanced`` error that lists every `requestAudioDucking()`
/// never undone, every `prepareAudioSession(for:)` never disabled (per session type), and every undo
/// that had nothing to undo, each with its place in ``calls``.
///
/// ```swift
/// @Test func clipDucksTheMovieAndGivesItBack() async throws {
///     let host = FakeOverlayHost()
///     let player = ClipPlayer(audio: host)          // your SDK's type
///     try await player.play(clip)
///     #expect(host.isDucked)
///     await player.stop()
///     try host.verifyBalanced()
/// }
/// ```
///
/// It keeps the `OverlayAudioDelegate` contract itself (``subject(expectedDuckLevel:)`` runs it through
/// ``OverlayAudioConformance``): sessions are counted per type, voice wins over generic, ducks stack
/// without compounding, unbalanced undos are ignored (and recorded). Every method may be called from
/// any thread.
public final class FakeOverlayHost: OverlayAudioDelegate, Sendable {
    /// One call the SDK made.
    public enum Call: Sendable, Hashable, CustomStringConvertible {
        /// `requestAudioDucking()`.
        case requestAudioDucking
        /// `disableAudioDucking()`.
        case disableAudioDucking
        /// `prepareAudioSession(for:)` of a type.
        case prepareAudioSession(AudioSessionType)
        /// `disableAudioSession(for:)` of a type.
        case disableAudioSession(AudioSessionType)

        public var description: String {
            switch self {
            case .requestAudioDucking: "requestAudioDucking()"
            case .disableAudioDucking: "disableAudioDucking()"
            case .prepareAudioSession(let type): "prepareAudioSession(for: .\(type))"
            case .disableAudioSession(let type): "disableAudioSession(for: .\(type))"
            }
        }
    }

    /// One recorded call: what, its place in the order of all calls, and how the host took it.
    public struct Record: Sendable, Hashable, CustomStringConvertible {
        /// The call's place among all calls to this host, from 0.
        public let index: Int
        /// The call.
        public let call: Call
        /// False for a `prepareAudioSession(for:)` the host refused (it threw, and counts nothing) and
        /// for an undo that had nothing to undo (ignored, as the contract says).
        public let accepted: Bool

        public var description: String { "#\(index) \(call)\(accepted ? "" : " (\(refusal))")" }

        private var refusal: String {
            if case .prepareAudioSession = call { "refused" } else { "nothing to undo" }
        }
    }

    /// What ``verifyBalanced()`` throws: the calls left open and the undos with nothing to undo.
    public struct Unbalanced: Error, Sendable, Hashable, CustomStringConvertible {
        /// Every call that was never undone, in call order: `requestAudioDucking()` without its
        /// `disableAudioDucking()`, `prepareAudioSession(for:)` without its `disableAudioSession(for:)`.
        public let open: [Record]
        /// Every undo that had nothing to undo when it came (the contract ignores them; a balanced SDK
        /// makes none).
        public let unmatched: [Record]

        public var description: String {
            var lines: [String] = []
            if !open.isEmpty {
                lines.append("\(open.count) call(s) left open:")
                lines += open.map { "- \($0.call) at call #\($0.index), never undone by \(Self.undo(of: $0.call))" }
            }
            if !unmatched.isEmpty {
                lines.append("\(unmatched.count) undo(s) with nothing to undo:")
                lines += unmatched.map { "- \($0.call) at call #\($0.index)" }
            }
            return lines.joined(separator: "\n")
        }

        /// The name of the call that undoes `call`.
        static func undo(of call: Call) -> String {
            switch call {
            case .requestAudioDucking, .disableAudioDucking: "\(Call.disableAudioDucking)"
            case .prepareAudioSession(let type), .disableAudioSession(let type): "\(Call.disableAudioSession(type))"
            }
        }
    }

    /// What `prepareAudioSession(for:)` throws when the host is told to refuse it.
    public struct PrepareRefused: Error, Sendable, Hashable, CustomStringConvertible {
        /// The session type refused.
        public let type: AudioSessionType

        /// The refusal of a prepare of `type`.
        public init(type: AudioSessionType) { self.type = type }

        public var description: String {
            "FakeOverlayHost refused prepareAudioSession(for: .\(type)), as the test asked (refusePrepare)"
        }
    }

    private struct State {
        var records: [Record] = []
        // The indexes of the calls still open, oldest first: ducks, and sessions per type.
        var openDucks: [Int] = []
        var openSessions: [AudioSessionType: [Int]] = [:]
        var refusals: [AudioSessionType: Int] = [:]
        var hostVolume: Float = 1
    }

    private let state = Locked(State())

    /// The duck level the host applies: the main video plays at its volume × this while ducked.
    public let duckLevel: Float

    /// A host whose ducks lower the main video to `duckLevel` (0.1, −20 dB, by default).
    public init(duckLevel: Float = 0.1) {
        self.duckLevel = duckLevel
    }

    // MARK: OverlayAudioDelegate

    /// Records the call and ducks the main video.
    public func requestAudioDucking() {
        state.withLock { state in
            let index = state.records.count
            state.records.append(Record(index: index, call: .requestAudioDucking, accepted: true))
            state.openDucks.append(index)
        }
    }

    /// Records the call and undoes the most recent open duck; with none open it is recorded as
    /// unmatched and ignored.
    public func disableAudioDucking() {
        state.withLock { state in
            let matched = state.openDucks.popLast() != nil
            state.records.append(Record(index: state.records.count, call: .disableAudioDucking, accepted: matched))
        }
    }

    /// Records the call and counts a session of `type`, or throws ``PrepareRefused`` (counting
    /// nothing) when ``refusePrepare(of:times:)`` asked for it.
    public func prepareAudioSession(for type: AudioSessionType) throws {
        let refused: Bool = state.withLock { state in
            let index = state.records.count
            if let left = state.refusals[type], left > 0 {
                state.refusals[type] = left - 1
                state.records.append(Record(index: index, call: .prepareAudioSession(type), accepted: false))
                return true
            }
            state.records.append(Record(index: index, call: .prepareAudioSession(type), accepted: true))
            state.openSessions[type, default: []].append(index)
            return false
        }
        if refused { throw PrepareRefused(type: type) }
    }

    /// Records the call and undoes the most recent open session of `type`; with none open it is
    /// recorded as unmatched and ignored.
    public func disableAudioSession(for type: AudioSessionType) {
        state.withLock { state in
            let matched = state.openSessions[type]?.popLast() != nil
            state.records.append(
                Record(index: state.records.count, call: .disableAudioSession(type), accepted: matched))
        }
    }

    // MARK: what the test reads

    /// Every call so far, in order.
    public var records: [Record] { state.withLock { $0.records } }

    /// Every call so far, in order, without the bookkeeping.
    public var calls: [Call] { records.map(\.call) }

    /// How many `requestAudioDucking()` calls are open.
    public var openDucks: Int { state.withLock { $0.openDucks.count } }

    /// How many `prepareAudioSession(for: type)` calls are open.
    public func openSessions(of type: AudioSessionType) -> Int {
        state.withLock { $0.openSessions[type]?.count ?? 0 }
    }

    /// Whether a duck is open: the main video plays at volume × ``duckLevel``.
    public var isDucked: Bool { openDucks > 0 }

    /// The session type a real host would have active: voice while any voice session is open, generic
    /// while only generic ones are, nil when none is.
    public var activeType: AudioSessionType? {
        state.withLock { state in
            if state.openSessions[.voice]?.isEmpty == false { return .voice }
            if state.openSessions[.generic]?.isEmpty == false { return .generic }
            return nil
        }
    }

    /// The host's own volume for its main video (the user's slider), 1 at first.
    public var hostVolume: Float {
        get { state.withLock { $0.hostVolume } }
        set { state.withLock { $0.hostVolume = newValue } }
    }

    /// The main video's effective volume: the host's volume, × ``duckLevel`` while ducked.
    public var mainVolume: Float {
        state.withLock { $0.hostVolume * ($0.openDucks.isEmpty ? 1 : duckLevel) }
    }

    /// Makes the next `times` calls of `prepareAudioSession(for: type)` throw ``PrepareRefused``, as a
    /// host whose session cannot be activated would: for testing that the SDK copes (and does not call
    /// `disableAudioSession(for:)` for a prepare that failed).
    public func refusePrepare(of type: AudioSessionType, times: Int = 1) {
        state.withLock { $0.refusals[type, default: 0] += max(times, 0) }
    }

    /// Forgets every call so far and what is open (the host volume and pending refusals stay).
    public func reset() {
        state.withLock { state in
            state.records = []
            state.openDucks = []
            state.openSessions = [:]
        }
    }

    /// The calls left open and the undos that had nothing to undo, as ``verifyBalanced()`` sees them.
    public var imbalance: Unbalanced {
        state.withLock { state in
            let open = (state.openDucks + state.openSessions.values.flatMap { $0 }).sorted()
                .map { state.records[$0] }
            let unmatched = state.records.filter { record in
                switch record.call {
                case .disableAudioDucking, .disableAudioSession: !record.accepted
                case .requestAudioDucking, .prepareAudioSession: false
                }
            }
            return Unbalanced(open: open, unmatched: unmatched)
        }
    }

    /// Throws ``Unbalanced`` naming every call left open and every undo with nothing to undo; returns
    /// when the SDK undid everything it did. Call it when the test ends.
    public func verifyBalanced() throws(Unbalanced) {
        let imbalance = self.imbalance
        if !imbalance.open.isEmpty || !imbalance.unmatched.isEmpty { throw imbalance }
    }

    /// This host as an ``OverlayAudioConformance/Subject``: the kit checks the fake keeps the contract
    /// it stands in for, with ducks expected at `expectedDuckLevel` (the test's own number, not read
    /// from the fake). The fake has no engine: what it would tell one is its own active session and
    /// effective volume, never paused.
    public func subject(expectedDuckLevel: Float) -> OverlayAudioConformance.Subject {
        OverlayAudioConformance.Subject(
            delegate: self, duckLevel: expectedDuckLevel,
            observe: { [self] in
                let type = activeType
                return OverlayAudioConformance.Observation(
                    isActive: type != nil, activeType: type, mainVolume: mainVolume)
            },
            observeEngine: { [self] in
                OverlayAudioConformance.EngineObservation(
                    isActive: activeType != nil, mainGain: mainVolume, mainPaused: false)
            },
            setHostVolume: { [self] in hostVolume = $0 })
    }
}
