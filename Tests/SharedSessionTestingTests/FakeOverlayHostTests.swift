import Foundation
import SharedSession
import SharedSessionTesting
import Synchronization
import Testing

@Suite("FakeOverlayHost")
struct FakeOverlayHostTests {
    @Test("the fake host keeps the OverlayAudioDelegate contract it stands in for")
    func conforms() throws {
        try OverlayAudioConformance.verify { FakeOverlayHost().subject(expectedDuckLevel: 0.1) }
        try OverlayAudioConformance.verify { FakeOverlayHost(duckLevel: 0.25).subject(expectedDuckLevel: 0.25) }
    }

    @Test("balanced calls verify; every call is recorded in order")
    func balanced() throws {
        let host = FakeOverlayHost()
        try host.prepareAudioSession(for: .generic)
        host.requestAudioDucking()
        #expect(host.isDucked)
        #expect(host.activeType == .generic)
        #expect(host.mainVolume == 0.1)
        host.disableAudioDucking()
        host.disableAudioSession(for: .generic)
        try host.verifyBalanced()
        #expect(
            host.calls == [
                .prepareAudioSession(.generic), .requestAudioDucking, .disableAudioDucking,
                .disableAudioSession(.generic),
            ])
        #expect(host.records.map(\.index) == [0, 1, 2, 3])
        #expect(host.activeType == nil)
        #expect(host.mainVolume == 1)
    }

    @Test("calls left open are named in the error, per session type, with their place")
    func leftOpen() throws {
        let host = FakeOverlayHost()
        host.requestAudioDucking()  // #0, never undone
        try host.prepareAudioSession(for: .voice)  // #1, never undone
        try host.prepareAudioSession(for: .generic)  // #2
        host.disableAudioSession(for: .generic)  // #3
        host.requestAudioDucking()  // #4
        host.disableAudioDucking()  // #5 undoes #4
        #expect(throws: FakeOverlayHost.Unbalanced.self) { try host.verifyBalanced() }
        let imbalance = host.imbalance
        #expect(imbalance.open.map(\.call) == [.requestAudioDucking, .prepareAudioSession(.voice)])
        #expect(imbalance.open.map(\.index) == [0, 1])
        #expect(imbalance.unmatched.isEmpty)
        let message = imbalance.description
        print(message)
        #expect(message.contains("requestAudioDucking() at call #0, never undone by disableAudioDucking()"))
        #expect(
            message.contains(
                "prepareAudioSession(for: .voice) at call #1, never undone by disableAudioSession(for: .voice)"))
        #expect(!message.contains("generic"))
    }

    @Test("an undo with nothing to undo is ignored, as the contract says, and named")
    func unmatchedUndo() throws {
        let host = FakeOverlayHost()
        host.disableAudioDucking()
        host.disableAudioSession(for: .voice)
        #expect(host.openDucks == 0)
        #expect(host.openSessions(of: .voice) == 0)
        do {
            try host.verifyBalanced()
            Issue.record("two unmatched undos verified as balanced")
        } catch {
            #expect(error.open.isEmpty)
            #expect(error.unmatched.map(\.call) == [.disableAudioDucking, .disableAudioSession(.voice)])
            #expect(error.description.contains("disableAudioSession(for: .voice) at call #1"))
        }
    }

    @Test("a refused prepare throws, counts nothing, and the SDK must not disable it")
    func refusedPrepare() throws {
        let host = FakeOverlayHost()
        host.refusePrepare(of: .voice)
        #expect(throws: FakeOverlayHost.PrepareRefused(type: .voice)) { try host.prepareAudioSession(for: .voice) }
        #expect(host.activeType == nil)
        #expect(host.records.first?.accepted == false)
        try host.verifyBalanced()
        try host.prepareAudioSession(for: .voice)  // the refusal was for one call
        #expect(host.activeType == .voice)
        host.disableAudioSession(for: .voice)
        try host.verifyBalanced()
    }

    @Test("calls from 8 threads at once are all recorded and balance")
    func concurrentCalls() throws {
        let host = FakeOverlayHost()
        // Eight threads of their own (a task group runs on the cooperative pool, as wide as the cores:
        // two here), released together so that their calls overlap.
        let ready = Atomic<Int>(0)
        let group = DispatchGroup()
        for index in 0..<8 {
            group.enter()
            let worker = Thread {
                ready.add(1, ordering: .acquiringAndReleasing)
                while ready.load(ordering: .acquiring) < 8 {}
                for round in 0..<1000 {
                    let type: AudioSessionType = (index + round).isMultiple(of: 2) ? .voice : .generic
                    try? host.prepareAudioSession(for: type)
                    host.requestAudioDucking()
                    host.disableAudioDucking()
                    host.disableAudioSession(for: type)
                }
                group.leave()
            }
            worker.start()
        }
        group.wait()
        #expect(host.records.count == 32000)
        #expect(Set(host.records.map(\.index)) == Set(0..<32000))
        try host.verifyBalanced()
    }

    @Test("reset forgets the calls and what is open")
    func reset() throws {
        let host = FakeOverlayHost()
        host.requestAudioDucking()
        host.reset()
        #expect(host.calls.isEmpty)
        try host.verifyBalanced()
    }
}
