import SharedSession
import SharedSessionTesting
import Testing

@Suite("OverlayAudioBridge keeps the StreamLayer call shape")
struct OverlayAudioBridgeTests {
    @Test("unbalanced disableAudioSession and disableAudioDucking are ignored with a warning and never corrupt counts")
    func unbalancedCallsAreIgnored() throws {
        let session = SharedSession(engine: RecordingEngine())
        let delegate = RecordingDelegate()
        session.delegate = delegate
        let bridge = OverlayAudioBridge(session: session, owner: "social-feed")
        bridge.disableAudioSession(for: .voice)
        bridge.disableAudioSession(for: .generic)
        bridge.disableAudioDucking()
        #expect(delegate.kinds.filter { if case .releaseIgnored = $0 { true } else { false } }.count == 3)
        try bridge.prepareAudioSession(for: .generic)
        bridge.requestAudioDucking()
        bridge.disableAudioSession(for: .voice)
        #expect(session.snapshot.genericCount == 1)
        #expect(session.snapshot.isDucked)
        bridge.disableAudioDucking()
        bridge.disableAudioDucking()
        bridge.disableAudioSession(for: .generic)
        bridge.disableAudioSession(for: .generic)
        #expect(bridge.heldCounts == (0, 0, 0))
        #expect(!session.snapshot.isActive)
        #expect(!session.snapshot.isDucked)
        // A count that went negative would swallow this prepare.
        try bridge.prepareAudioSession(for: .generic)
        #expect(session.snapshot.isActive)
        bridge.disableAudioSession(for: .generic)
    }

    @Test("leases carry the bridge's owner name, and a torn-down bridge leaves no duck or session behind")
    func bridgeOwnsItsLeases() throws {
        let session = SharedSession(engine: RecordingEngine())
        do {
            let bridge = OverlayAudioBridge(session: session, owner: "watch-party")
            try bridge.prepareAudioSession(for: .voice)
            bridge.requestAudioDucking()
            #expect(session.snapshot.owners == ["watch-party"])
            #expect(session.snapshot.ducks.map(\.owner) == ["watch-party"])
        }
        #expect(!session.snapshot.isActive)
        #expect(!session.snapshot.isDucked)
    }

    @Test("a refused prepare counts nothing, so no disable is owed for it")
    func refusedPrepareCountsNothing() throws {
        let engine = RecordingEngine()
        engine.refuseActivation(of: .playAndRecord, message: "no microphone permission")
        let session = SharedSession(engine: engine)
        let bridge = OverlayAudioBridge(session: session, owner: "watch-party")
        #expect(throws: SessionError.self) { try bridge.prepareAudioSession(for: .voice) }
        #expect(bridge.heldCounts == (0, 0, 0))
        #expect(!session.snapshot.isActive)
    }
}
