import Foundation
import SharedSession
import SharedSessionTesting
import Testing

/// The conformance kit passes the ready bridge and names the rules a broken implementation breaks.
@Suite("Conformance kit")
struct ConformanceKitTests {
    @Test("OverlayAudioBridge passes every rule")
    func bridgeConforms() throws {
        try OverlayAudioConformance.verify { try .bridge(expectedDuckLevel: 0.1) }
    }

    @Test("a port of the StreamLayer sample fails by name: generic + generic total, negative counts, stale restore")
    func streamLayerSampleIsCaught() throws {
        let failures = try OverlayAudioConformance.check { StreamLayerSamplePort.subject() }
        let broken = Set(failures.map(\.rule))
        #expect(broken.contains(.genericReleaseKeepsVoiceActive))
        #expect(broken.contains(.unbalancedSessionDisableIgnored))
        #expect(broken.contains(.volumeChangeWhileDuckedRestoresNewVolume))
        #expect(!broken.contains(.genericSessionActivates))
        #expect(!broken.contains(.ducksDoNotCompound))
        for failure in failures { print("caught: \(failure)") }
    }

    @Test("verify throws a ConformanceError that lists the broken rules")
    func verifyThrowsNamedRules() {
        do {
            try OverlayAudioConformance.verify([.genericReleaseKeepsVoiceActive]) { StreamLayerSamplePort.subject() }
            Issue.record("verify passed a broken implementation")
        } catch let error as OverlayAudioConformance.ConformanceError {
            #expect(error.brokenRules == [.genericReleaseKeepsVoiceActive])
            #expect(error.description.contains("generic release keeps a held voice session active"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("the expected duck level is the test's: a policy at −12 dB fails a kit told −20 dB")
    func expectedLevelIsTheAuthors() throws {
        let policy = try SessionPolicy(duckLevel: 0.25)
        let failures = try OverlayAudioConformance.check { try .bridge(policy: policy, expectedDuckLevel: 0.1) }
        #expect(Set(failures.map(\.rule)).contains(.duckLowersMainVolume))
    }

    @Test("a delegate that counts its ducks but never sends a gain fails by rule, with the engine's gain named")
    func countsWithoutGainAreCaught() throws {
        let failures = try OverlayAudioConformance.check { try CountingOnlyBridge.subject() }
        let broken = Set(failures.map(\.rule))
        #expect(
            broken == [
                .duckLowersMainVolume, .ducksDoNotCompound, .ducksRestoreInAnyOrder, .unbalancedDuckDisableIgnored,
                .volumeChangeWhileDuckedRestoresNewVolume,
            ])
        let duck = try #require(failures.first { $0.rule == .duckLowersMainVolume })
        #expect(duck.message.contains("expected the engine told gain 0.08"))
        #expect(duck.message.contains("main stream told gain 0.8"))
        do {
            try OverlayAudioConformance.verify { try CountingOnlyBridge.subject() }
            Issue.record("verify passed a delegate that never sends a gain")
        } catch let error as OverlayAudioConformance.ConformanceError {
            #expect(error.brokenRules.contains(.duckLowersMainVolume))
            #expect(error.description.contains("duck lowers the main video to volume × duck level"))
        }
    }

    @Test("a delegate that pauses the movie instead of ducking it fails: the engine was told to pause")
    func pauseInsteadOfDuckIsCaught() throws {
        let failures = try OverlayAudioConformance.check([.duckLowersMainVolume]) { try PausingBridge.subject() }
        #expect(failures.map(\.rule).contains(.duckLowersMainVolume))
        #expect(failures.contains { $0.message.contains("the engine was told to pause it") })
    }

    @Test("a bridge over a custom duck level is checked against that level")
    func customDuckLevel() throws {
        let policy = try SessionPolicy(duckLevel: 0.25)
        try OverlayAudioConformance.verify { try .bridge(policy: policy, expectedDuckLevel: 0.25) }
    }
}

/// The host-side sample of StreamLayer's "Audio Sessions Management" page, ported faithfully,
/// defects included: the total adds the generic count to itself, counters go negative, and the
/// restore pops a volume saved before the host's change.
final class StreamLayerSamplePort: OverlayAudioDelegate, @unchecked Sendable {
    // @unchecked: every stored property is guarded by `lock`, as in the sample (an NSLock, which
    // ThreadSanitizer can see).
    private let lock = NSLock()
    private let volumeReduceRate: Float = 0.1
    private var playerVolumeOriginal: [Float] = []
    private var streamVolume: Float = 1
    private var genericSessions = 0
    private var voiceSessions = 0
    private var totalSessions: Int { genericSessions + genericSessions }
    private(set) var activeType: AudioSessionType?

    static func subject() -> OverlayAudioConformance.Subject {
        let port = StreamLayerSamplePort()
        return OverlayAudioConformance.Subject(
            delegate: port, duckLevel: 0.1,
            observe: {
                port.lock.withLock {
                    .init(isActive: port.activeType != nil, activeType: port.activeType, mainVolume: port.streamVolume)
                }
            },
            // The sample sets the player's volume itself: what it reports is what the player was told.
            observeEngine: {
                port.lock.withLock {
                    .init(isActive: port.activeType != nil, mainGain: port.streamVolume, mainPaused: false)
                }
            },
            setHostVolume: { volume in port.lock.withLock { port.streamVolume = volume } })
    }

    func requestAudioDucking() {
        lock.withLock {
            let isDuckingActive = playerVolumeOriginal.last.map { streamVolume == volumeReduceRate * $0 } ?? false
            playerVolumeOriginal.append(streamVolume)
            if !isDuckingActive { streamVolume = volumeReduceRate * streamVolume }
        }
    }

    func disableAudioDucking() {
        lock.withLock {
            if !playerVolumeOriginal.isEmpty { streamVolume = playerVolumeOriginal.popLast() ?? 1 }
        }
    }

    func disableAudioSession(for type: AudioSessionType) {
        lock.withLock {
            switch type {
            case .voice: voiceSessions -= 1
            case .generic: genericSessions -= 1
            }
            if totalSessions == 0 {
                activeType = nil
                return
            }
            if voiceSessions > 0 { return }
            if type == .voice { activeType = .generic }
        }
    }

    func prepareAudioSession(for type: AudioSessionType) throws {
        lock.withLock {
            switch type {
            case .voice:
                voiceSessions += 1
                activeType = .voice
            case .generic:
                genericSessions += 1
                if genericSessions > 0, voiceSessions == 0 { activeType = .generic }
            }
        }
    }
}

/// A host's delegate with a deliberate defect: sessions go to an `OverlayAudioBridge`, but ducks are
/// only counted. It reports the volume its counts imply, so a kit that read only the delegate's own
/// state would pass it; the engine was never told a gain.
final class CountingOnlyBridge: OverlayAudioDelegate, @unchecked Sendable {
    // @unchecked: `ducks` and `hostVolume` are guarded by `lock`; `bridge` is Sendable in effect
    // (the bridge's methods may be called from any thread) and never reassigned.
    private let lock = NSLock()
    private let bridge: OverlayAudioBridge
    private let session: SharedSession
    private var ducks = 0
    private var hostVolume: Float = 1

    init(session: SharedSession) {
        self.session = session
        bridge = OverlayAudioBridge(session: session, owner: "counting")
    }

    static func subject() throws -> OverlayAudioConformance.Subject {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(source: try PCMBufferSource(samples: [0, 0], loops: true))
        let host = CountingOnlyBridge(session: session)
        return OverlayAudioConformance.Subject(
            delegate: host, duckLevel: 0.1,
            observe: {
                host.lock.withLock {
                    let snapshot = session.snapshot
                    let type: AudioSessionType? = snapshot.activeConfiguration.map { $0 == .voice ? .voice : .generic }
                    return .init(
                        isActive: snapshot.isActive, activeType: type,
                        mainVolume: host.hostVolume * (host.ducks > 0 ? 0.1 : 1))
                }
            },
            observeEngine: { .init(engine, main: main.id) },
            setHostVolume: { volume in
                host.lock.withLock { host.hostVolume = volume }
                session.mainVolume = volume
            })
    }

    func requestAudioDucking() { lock.withLock { ducks += 1 } }
    func disableAudioDucking() { lock.withLock { ducks = max(0, ducks - 1) } }
    func prepareAudioSession(for type: AudioSessionType) throws { try bridge.prepareAudioSession(for: type) }
    func disableAudioSession(for type: AudioSessionType) { bridge.disableAudioSession(for: type) }
}

/// A host's delegate with a deliberate defect: a duck pauses the movie (the session's pause request)
/// and says the movie is at the ducked volume.
final class PausingBridge: OverlayAudioDelegate, @unchecked Sendable {
    // @unchecked: `pauses` is guarded by `lock`; the session's methods may be called from any thread.
    private let lock = NSLock()
    private let session: SharedSession
    private var pauses: [DuckLease] = []

    init(session: SharedSession) { self.session = session }

    static func subject() throws -> OverlayAudioConformance.Subject {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(source: try PCMBufferSource(samples: [0, 0], loops: true))
        let host = PausingBridge(session: session)
        return OverlayAudioConformance.Subject(
            delegate: host, duckLevel: 0.1,
            observe: {
                let ducked = host.lock.withLock { !host.pauses.isEmpty }
                return .init(
                    isActive: session.snapshot.isActive, activeType: nil,
                    mainVolume: session.mainVolume * (ducked ? 0.1 : 1))
            },
            observeEngine: { .init(engine, main: main.id) },
            setHostVolume: { session.mainVolume = $0 })
    }

    func requestAudioDucking() {
        let lease = session.pauseMain(owner: "pausing")
        lock.withLock { pauses.append(lease) }
    }

    func disableAudioDucking() { lock.withLock { pauses.popLast() }?.release() }
    func prepareAudioSession(for type: AudioSessionType) throws {}
    func disableAudioSession(for type: AudioSessionType) {}
}
