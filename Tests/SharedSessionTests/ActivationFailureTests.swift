import SharedSession
import SharedSessionTesting
import Testing

@Suite("Activation refused by the engine")
struct ActivationFailureTests {
    @Test("refused activation leaves the session inactive, with the engine's reason in an event and the error")
    func refusedActivation() throws {
        let engine = RecordingEngine()
        engine.refuseActivation(of: .playback, message: "device busy")
        let session = SharedSession(engine: engine)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        #expect {
            _ = try session.acquire(.generic, owner: "feed")
        } throws: { error in
            (error as? SessionError)?.code == .activationRefused && "\(error)".contains("device busy")
        }
        #expect(!session.snapshot.isActive)
        #expect(session.snapshot.leases.isEmpty)
        #expect(delegate.kinds.contains(.activationFailed(.generic, message: "device busy")))
        #expect(!delegate.kinds.contains { if case .leaseAcquired = $0 { true } else { false } })
        // Nothing retries on its own; the next request tries again.
        engine.refuseActivation(of: .playback, message: nil)
        let lease = try session.acquire(.generic, owner: "feed")
        #expect(session.snapshot.isActive)
        lease.release()
    }

    @Test("a failed upgrade to voice leaves the generic holders as they were")
    func failedVoiceUpgradeKeepsGeneric() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let generic = try session.acquire(.generic, owner: "feed")
        engine.refuseCapture(message: "no microphone")
        #expect(throws: SessionError.self) { _ = try session.acquire(.voice, owner: "watch-party") }
        #expect(session.snapshot.activeConfiguration == .generic)
        #expect(engine.activeConfiguration == .generic)
        #expect(session.snapshot.owners == ["feed"])
        generic.release()
        #expect(!session.snapshot.isActive)
    }
}
