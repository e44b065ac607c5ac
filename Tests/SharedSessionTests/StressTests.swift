import Foundation
import SharedSession
import SharedSessionTesting
import Synchronization
import Testing

@Suite("Concurrency")
struct StressTests {
    @Test("8 threads hammering the bridge end balanced, inactive, unducked, at the exact starting volume")
    func hammerTheBridge() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        try session.setMainVolume(0.73)
        let bridges = (0..<8).map { OverlayAudioBridge(session: session, owner: "sdk-\($0)") }
        let operations = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let rounds = 2_000
        let start = ContinuousClock.now
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            let worker = Thread {
                let bridge = bridges[thread % bridges.count]
                var generator = SystemRandomNumberGenerator()
                for round in 0..<rounds {
                    let type: AudioSessionType = Bool.random(using: &generator) ? .voice : .generic
                    do {
                        try bridge.prepareAudioSession(for: type)
                        bridge.requestAudioDucking()
                        if round % 5 == 0 { try session.setMainVolume(0.73) }
                        bridge.disableAudioDucking()
                        bridge.disableAudioSession(for: type)
                        if round % 13 == 0 {
                            // Unbalanced calls: ignored, never a negative count.
                            bridge.disableAudioDucking()
                            bridge.disableAudioSession(for: type)
                        }
                        operations.add(round % 13 == 0 ? 6 : 4, ordering: .relaxed)
                    } catch {
                        failures.add(1, ordering: .relaxed)
                    }
                }
                group.leave()
            }
            worker.start()
        }
        group.wait()
        let elapsed = ContinuousClock.now - start
        print("stress: \(operations.load(ordering: .relaxed)) bridge calls on 8 threads in \(elapsed)")
        let snapshot = session.snapshot
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(snapshot.leases.isEmpty)
        #expect(snapshot.ducks.isEmpty)
        #expect(!snapshot.isActive)
        #expect(engine.activeConfiguration == nil)
        #expect(snapshot.mainVolume == 0.73)
        #expect(snapshot.mainGain == 0.73)
        #expect(engine.gains[main.id] == 0.73)
    }
}
