public import SharedSession
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A kit that SDK authors and hosts run against any `OverlayAudioDelegate` implementation, from
/// their own XCTest or Swift Testing suite, to check the contract's rules.
///
/// It depends on no test framework (like swift-nio's `ByteToMessageDecoderVerifier`): ``verify(_:make:)``
/// throws a ``ConformanceError`` listing every broken rule by name, and ``check(_:make:)`` returns the
/// failures for a report. Each rule runs on a fresh subject from `make`.
///
/// After every step the kit checks two views: what the implementation reports (``Observation``) and
/// what the engine was told (``EngineObservation``: the configuration activated, the gain and the
/// pause sent to the main video's stream). An implementation that keeps its counts right but never
/// sends the gain, or pauses the movie instead of ducking it, fails the rule where the engine's view
/// differs. The duck level the rules expect is the one the test's author gives the subject, never
/// one read from the policy under test.
///
/// ```swift
/// @Test func myDelegateKeepsTheContract() throws {
///     try OverlayAudioConformance.verify { try .bridge(expectedDuckLevel: 0.1) }   // −20 dB
/// }
/// ```
public enum OverlayAudioConformance {
    /// What the kit observes of the host after each call.
    public struct Observation: Sendable, Hashable, CustomStringConvertible {
        /// Whether the session is active.
        public var isActive: Bool
        /// The session type whose configuration is active, or `nil` while inactive.
        public var activeType: AudioSessionType?
        /// The main video's effective output volume (the host's volume × any duck), once ramps settle.
        public var mainVolume: Float

        /// Creates an observation.
        public init(isActive: Bool, activeType: AudioSessionType?, mainVolume: Float) {
            self.isActive = isActive
            self.activeType = activeType
            self.mainVolume = mainVolume
        }

        public var description: String {
            "\(isActive ? "active \(activeType.map { "\($0)" } ?? "?")" : "inactive"), main volume \(mainVolume)"
        }
    }

    /// What the engine (or the player) was told, as the kit checks it after each call: the sound a
    /// user would hear, whatever the implementation's own state says.
    public struct EngineObservation: Sendable, Hashable, CustomStringConvertible {
        /// Whether the engine holds an activated configuration (activated, not deactivated since).
        public var isActive: Bool
        /// The gain last sent to the main video's stream (the host's volume × any duck).
        public var mainGain: Float
        /// Whether the main video's stream was told to pause.
        public var mainPaused: Bool

        /// Creates an observation of the engine.
        public init(isActive: Bool, mainGain: Float, mainPaused: Bool) {
            self.isActive = isActive
            self.mainGain = mainGain
            self.mainPaused = mainPaused
        }

        /// What `engine` was last told: its active configuration, and the gain and pause of `main`
        /// (gain 0 and paused if the stream is not open on it).
        public init(_ engine: RecordingEngine, main: StreamID) {
            self.init(
                isActive: engine.activeConfiguration != nil, mainGain: engine.gains[main] ?? 0,
                mainPaused: engine.paused[main] ?? true)
        }

        public var description: String {
            "engine \(isActive ? "active" : "inactive"), main stream told gain \(mainGain)"
                + (mainPaused ? ", paused" : "")
        }
    }

    /// One implementation under test, with the means to watch it.
    public struct Subject {
        /// The implementation the SDK would call.
        public var delegate: any OverlayAudioDelegate
        /// Reads the host's state after the calls have taken effect.
        public var observe: () -> Observation
        /// Reads what the engine (or player) was told after the calls have taken effect.
        public var observeEngine: () -> EngineObservation
        /// Sets the host's own main-video volume (the user moving the volume slider).
        public var setHostVolume: (Float) -> Void
        /// The duck level the test's author expects (0.1 for −20 dB, as in the StreamLayer sample):
        /// the rules check the main video at volume × this level while ducked.
        public var duckLevel: Float

        /// Describes a subject. `duckLevel` is the level the test expects a duck to reach, given by
        /// the test's author: read from the policy under test, a changed level would pass unseen.
        public init(
            delegate: any OverlayAudioDelegate, duckLevel: Float,
            observe: @escaping () -> Observation, observeEngine: @escaping () -> EngineObservation,
            setHostVolume: @escaping (Float) -> Void
        ) {
            self.delegate = delegate
            self.observe = observe
            self.observeEngine = observeEngine
            self.setHostVolume = setHostVolume
            self.duckLevel = duckLevel
        }

        /// An `OverlayAudioBridge` over a new `SharedSession` on a ``RecordingEngine`` with a main
        /// stream open: the reference implementation, and an example of wiring a subject. The kit
        /// expects a duck to reach `expectedDuckLevel` (for `policy`'s default duck level).
        ///
        /// - Throws: what opening the main stream throws (``SessionError``).
        public static func bridge(policy: SessionPolicy = .default, expectedDuckLevel: Float) throws -> Subject {
            let engine = RecordingEngine()
            let session = SharedSession(engine: engine, policy: policy)
            let main = try session.openMainStream(source: try PCMBufferSource(samples: [0, 0], loops: true))
            let bridge = OverlayAudioBridge(session: session, owner: "conformance")
            return Subject(
                delegate: bridge, duckLevel: expectedDuckLevel,
                observe: {
                    let snapshot = session.snapshot
                    let type: AudioSessionType? = snapshot.activeConfiguration.map {
                        $0 == policy.voiceConfiguration ? .voice : .generic
                    }
                    return Observation(isActive: snapshot.isActive, activeType: type, mainVolume: snapshot.mainGain)
                },
                observeEngine: { EngineObservation(engine, main: main.id) },
                setHostVolume: { session.mainVolume = $0 })
        }
    }

    /// A rule of the `OverlayAudioDelegate` contract.
    public enum Rule: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case genericSessionActivates = "generic session activates and its release deactivates"
        case voiceTakesPrecedence = "voice takes precedence over generic"
        case voiceReleaseReturnsToGeneric = "voice release returns to generic without deactivating"
        case genericReleaseKeepsVoiceActive = "generic release keeps a held voice session active"
        case lastReleaseDeactivates = "only the last release deactivates"
        case unbalancedSessionDisableIgnored = "unbalanced disableAudioSession is ignored"
        case duckLowersMainVolume = "duck lowers the main video to volume × duck level"
        case ducksDoNotCompound = "stacked ducks do not compound"
        case ducksRestoreInAnyOrder = "ducks restore only when the last one is undone"
        case unbalancedDuckDisableIgnored = "unbalanced disableAudioDucking is ignored"
        case volumeChangeWhileDuckedRestoresNewVolume = "restore goes to the volume set while ducked"
        case concurrentCallsStayBalanced = "balanced calls from 8 threads end inactive and unducked"

        public var description: String { rawValue }
    }

    /// One broken rule, with what was seen.
    public struct Failure: Sendable, Hashable, CustomStringConvertible {
        /// The rule.
        public let rule: Rule
        /// What was expected and what was observed.
        public let message: String

        public var description: String { "\(rule.rawValue): \(message)" }
    }

    /// Every broken rule of one verification.
    public struct ConformanceError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The failures, in rule order.
        public let failures: [Failure]
        /// The rules that failed.
        public var brokenRules: Set<Rule> { Set(failures.map(\.rule)) }

        public var description: String {
            "OverlayAudioDelegate breaks \(failures.count) rule(s):\n"
                + failures.map { "- \($0)" }.joined(separator: "\n")
        }
    }

    /// Runs `rules` and throws a ``ConformanceError`` naming every one that is broken.
    public static func verify(_ rules: [Rule] = Rule.allCases, make: () throws -> Subject) throws {
        let failures = try check(rules, make: make)
        if !failures.isEmpty { throw ConformanceError(failures: failures) }
    }

    /// Runs `rules` and returns the failures (empty when the implementation conforms).
    public static func check(_ rules: [Rule] = Rule.allCases, make: () throws -> Subject) throws -> [Failure] {
        var failures: [Failure] = []
        for rule in rules {
            var run = Run(rule: rule, subject: try make())
            run.perform()
            failures += run.failures
        }
        return failures
    }
}

extension OverlayAudioConformance {
    /// One rule's scenario against one subject.
    private struct Run {
        let rule: Rule
        let subject: Subject
        var failures: [Failure] = []

        init(rule: Rule, subject: Subject) {
            self.rule = rule
            self.subject = subject
        }

        private var delegate: any OverlayAudioDelegate { subject.delegate }

        private mutating func fail(_ message: String) {
            failures.append(Failure(rule: rule, message: message))
        }

        private mutating func prepare(_ type: AudioSessionType) -> Bool {
            do {
                try delegate.prepareAudioSession(for: type)
                return true
            } catch {
                fail("prepareAudioSession(for: .\(type)) threw \(error)")
                return false
            }
        }

        private mutating func expect(active type: AudioSessionType?, after step: String) {
            let seen = subject.observe()
            if let type {
                if !seen.isActive || seen.activeType != type {
                    fail("after \(step): expected active \(type), observed \(seen)")
                }
            } else if seen.isActive {
                fail("after \(step): expected inactive, observed \(seen)")
            }
            let told = subject.observeEngine()
            if told.isActive != (type != nil) {
                fail("after \(step): expected the engine \(type == nil ? "inactive" : "active"), it was \(told)")
            }
        }

        /// Checks the volume the implementation reports and the gain the engine was told: the same
        /// `volume`, and the main video playing (a duck is not a pause).
        private mutating func expect(volume: Float, after step: String) {
            let seen = subject.observe().mainVolume
            let tolerance = max(1e-4, volume * 1e-3)
            if abs(seen - volume) > tolerance {
                fail("after \(step): expected main volume \(volume), observed \(seen)")
            }
            let told = subject.observeEngine()
            if abs(told.mainGain - volume) > tolerance {
                fail("after \(step): expected the engine told gain \(volume) for the main video, it was \(told)")
            }
            if told.mainPaused {
                fail("after \(step): expected the main video playing at \(volume), the engine was told to pause it")
            }
        }

        mutating func perform() {
            let level = subject.duckLevel
            switch rule {
            case .genericSessionActivates:
                expect(active: nil, after: "start")
                guard prepare(.generic) else { return }
                expect(active: .generic, after: "prepare(.generic)")
                delegate.disableAudioSession(for: .generic)
                expect(active: nil, after: "prepare(.generic), disable(.generic)")

            case .voiceTakesPrecedence:
                guard prepare(.generic), prepare(.voice) else { return }
                expect(active: .voice, after: "prepare(.generic), prepare(.voice)")
                guard prepare(.generic) else { return }
                expect(active: .voice, after: "another prepare(.generic) while voice is held")

            case .voiceReleaseReturnsToGeneric:
                guard prepare(.generic), prepare(.voice) else { return }
                delegate.disableAudioSession(for: .voice)
                expect(active: .generic, after: "prepare(.generic), prepare(.voice), disable(.voice)")

            case .genericReleaseKeepsVoiceActive:
                guard prepare(.voice), prepare(.generic) else { return }
                delegate.disableAudioSession(for: .generic)
                expect(active: .voice, after: "prepare(.voice), prepare(.generic), disable(.generic)")
                delegate.disableAudioSession(for: .voice)
                expect(active: nil, after: "then disable(.voice)")

            case .lastReleaseDeactivates:
                guard prepare(.generic), prepare(.generic), prepare(.voice) else { return }
                delegate.disableAudioSession(for: .generic)
                expect(active: .voice, after: "releasing 1 of 2 generics under a voice")
                delegate.disableAudioSession(for: .voice)
                expect(active: .generic, after: "releasing the voice with a generic left")
                delegate.disableAudioSession(for: .generic)
                expect(active: nil, after: "releasing the last generic")

            case .unbalancedSessionDisableIgnored:
                delegate.disableAudioSession(for: .generic)
                delegate.disableAudioSession(for: .voice)
                expect(active: nil, after: "disable(.generic) and disable(.voice) with nothing prepared")
                guard prepare(.generic) else { return }
                expect(active: .generic, after: "unbalanced disables, then prepare(.generic)")
                delegate.disableAudioSession(for: .voice)
                expect(active: .generic, after: "an unbalanced disable(.voice) while a generic is held")
                delegate.disableAudioSession(for: .generic)
                delegate.disableAudioSession(for: .generic)
                guard prepare(.generic) else { return }
                expect(active: .generic, after: "one prepare, two disables, then a new prepare(.generic)")
                delegate.disableAudioSession(for: .generic)
                expect(active: nil, after: "releasing that prepare")

            case .duckLowersMainVolume:
                subject.setHostVolume(0.8)
                expect(volume: 0.8, after: "host volume 0.8")
                delegate.requestAudioDucking()
                expect(volume: 0.8 * level, after: "requestAudioDucking() at volume 0.8")
                delegate.disableAudioDucking()
                expect(volume: 0.8, after: "disableAudioDucking()")

            case .ducksDoNotCompound:
                subject.setHostVolume(1)
                delegate.requestAudioDucking()
                delegate.requestAudioDucking()
                expect(volume: level, after: "two requestAudioDucking()")
                delegate.disableAudioDucking()
                delegate.disableAudioDucking()

            case .ducksRestoreInAnyOrder:
                subject.setHostVolume(1)
                delegate.requestAudioDucking()
                delegate.requestAudioDucking()
                delegate.requestAudioDucking()
                delegate.disableAudioDucking()
                expect(volume: level, after: "three ducks, one undone")
                delegate.disableAudioDucking()
                expect(volume: level, after: "three ducks, two undone")
                delegate.disableAudioDucking()
                expect(volume: 1, after: "three ducks, all undone")

            case .unbalancedDuckDisableIgnored:
                subject.setHostVolume(0.6)
                delegate.disableAudioDucking()
                expect(volume: 0.6, after: "disableAudioDucking() with no duck")
                delegate.requestAudioDucking()
                expect(volume: 0.6 * level, after: "an unbalanced undo, then requestAudioDucking()")
                delegate.disableAudioDucking()
                expect(volume: 0.6, after: "undoing that duck")

            case .volumeChangeWhileDuckedRestoresNewVolume:
                subject.setHostVolume(1)
                delegate.requestAudioDucking()
                subject.setHostVolume(0.5)
                expect(volume: 0.5 * level, after: "host volume 0.5 while ducked")
                delegate.disableAudioDucking()
                expect(volume: 0.5, after: "undoing the duck after the volume change")

            case .concurrentCallsStayBalanced:
                subject.setHostVolume(0.7)
                let box = DelegateBox(delegate)
                let errors = Atomic<Int>(0)
                let threads = (0..<8).map { index in
                    Thread {
                        for round in 0..<200 {
                            let type: AudioSessionType = (index + round) % 3 == 0 ? .voice : .generic
                            do {
                                try box.delegate.prepareAudioSession(for: type)
                                box.delegate.requestAudioDucking()
                                box.delegate.disableAudioDucking()
                                box.delegate.disableAudioSession(for: type)
                            } catch {
                                errors.add(1, ordering: .relaxed)
                            }
                        }
                    }
                }
                threads.forEach { $0.join() }
                if errors.load(ordering: .relaxed) > 0 {
                    fail("\(errors.load(ordering: .relaxed)) prepareAudioSession calls threw under concurrency")
                }
                expect(active: nil, after: "8 threads × 200 balanced rounds")
                expect(volume: 0.7, after: "8 threads × 200 balanced rounds")
            }
        }
    }

    /// Carries a delegate to other threads: the contract says every method may be called from any
    /// thread, so an implementation that keeps it is safe to share; one that does not is what the
    /// concurrency rule is there to catch.
    private final class DelegateBox: @unchecked Sendable {
        let delegate: any OverlayAudioDelegate
        init(_ delegate: any OverlayAudioDelegate) { self.delegate = delegate }
    }
}

/// A plain joinable thread, so the concurrency rule runs real parallel callers without a test
/// framework and without Dispatch's pool, which is only as wide as the machine's cores.
private final class Thread: @unchecked Sendable {
    // @unchecked: `handle` and `started` are written once in init before any other access and read
    // only by join().
    private var handle = pthread_t()
    private var started = false
    private let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
        let retained = Unmanaged.passRetained(self)
        let result = pthread_create(
            &handle, nil,
            { raw in
                #if canImport(Darwin)
                    let thread = Unmanaged<Thread>.fromOpaque(raw).takeRetainedValue()
                #else
                    let thread = Unmanaged<Thread>.fromOpaque(raw!).takeRetainedValue()
                #endif
                thread.body()
                return nil
            }, retained.toOpaque())
        if result == 0 {
            started = true
        } else {
            // No thread to be had: run the calls here rather than lose them.
            retained.release()
            body()
        }
    }

    func join() {
        if started { pthread_join(handle, nil) }
    }
}
