import Foundation
import SharedSession
import SharedSessionTesting
import Testing

/// The conformance kit passes the ready bridge and names the rules a broken implementation breaks.
@Suite("Conformance kit")
struct ConformanceKitTests {
    @Test("OverlayAudioBridge passes every rule")
    func bridgeConforms() throws {
        try OverlayAudioConformance.verify { .bridge() }
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

    @Test("a bridge over a custom duck level is checked against that level")
    func customDuckLevel() throws {
        let policy = try SessionPolicy(duckLevel: 0.25)
        try OverlayAudioConformance.verify { .bridge(policy: policy) }
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
            delegate: port,
            observe: {
                port.lock.withLock {
                    .init(isActive: port.activeType != nil, activeType: port.activeType, mainVolume: port.streamVolume)
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
