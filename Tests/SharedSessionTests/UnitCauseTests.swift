import SharedSession
import SharedSessionTesting
import Testing

@Suite("Units named in events")
struct UnitCauseTests {
    @Test("a unit's stream and a bridge's unbalanced call name the unit as the cause")
    func unitIsTheCause() throws {
        let session = SharedSession(engine: RecordingEngine())
        let delegate = RecordingDelegate()
        session.delegate = delegate
        let clip = try session.openStream(
            StreamDescriptor(name: "clip", role: .music), source: try SineSource(frequency: 880, amplitude: 0.3),
            owner: "social-feed")
        try clip.setVolume(0.5)
        clip.close()
        OverlayAudioBridge(session: session, owner: "watch-party").disableAudioDucking()
        let causes = delegate.events.map(\.cause)
        #expect(
            causes == [
                .unit(owner: "social-feed"), .unit(owner: "social-feed"), .unit(owner: "social-feed"),
                .unit(owner: "watch-party"),
            ])
        #expect(session.snapshot.streams.isEmpty)
    }
}
