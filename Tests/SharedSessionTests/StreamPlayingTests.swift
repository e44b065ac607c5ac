import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// A stream that other processes play and that ducks the main while it plays (an adopted web view's
/// clip): the engine reports `streamPlaying`, and the session holds a duck for the stream's owner,
/// down the same road as a duck the owner asked for. Levels measured in what the offline engine rendered.
@Suite("A stream that ducks while it plays")
struct StreamPlayingTests {
    static func overlay(_ scene: OfflineScene, owner: String?) throws -> StreamHandle {
        try scene.session.openStream(
            StreamDescriptor(name: "clip", role: .music), source: try SineSource(frequency: 880, amplitude: 0),
            owner: owner)
    }

    @Test("playing ducks the main for the stream's owner; stopping restores it; a second start ducks again")
    func ducksWhilePlaying() throws {
        let scene = try OfflineScene()
        let events = RecordingDelegate()
        scene.session.delegate = events
        let clip = try Self.overlay(scene, owner: "social-feed")
        scene.engine.post(.streamPlaying(stream: clip.id, playing: true))
        #expect(scene.session.snapshot.ducks.map(\.owner) == ["social-feed"])
        let ducked = try scene.mainLevel(after: 400)
        #expect(abs(ducked - (fullLevel - 20)) < 0.1, "ducked to \(ducked) dBFS")
        // A repeated start holds no second duck.
        scene.engine.post(.streamPlaying(stream: clip.id, playing: true))
        #expect(scene.session.snapshot.ducks.count == 1)
        scene.engine.post(.streamPlaying(stream: clip.id, playing: false))
        #expect(scene.session.snapshot.ducks.isEmpty)
        let restored = try scene.mainLevel(after: 600)
        #expect(abs(restored - fullLevel) < 0.1, "restored to \(restored) dBFS")
        scene.engine.post(.streamPlaying(stream: clip.id, playing: true))
        #expect(scene.session.snapshot.ducks.map(\.owner) == ["social-feed"])
        let kinds = events.kinds
        #expect(kinds.filter { if case .duckAcquired = $0 { true } else { false } }.count == 2)
        #expect(kinds.filter { if case .duckReleased = $0 { true } else { false } }.count == 1)
        clip.close()
    }

    @Test("closing the stream while it plays releases its duck at once")
    func closeReleases() throws {
        let scene = try OfflineScene()
        let clip = try Self.overlay(scene, owner: "social-feed")
        scene.engine.post(.streamPlaying(stream: clip.id, playing: true))
        #expect(scene.session.snapshot.ducks.count == 1)
        clip.close()
        #expect(scene.session.snapshot.ducks.isEmpty)
        let restored = try scene.mainLevel(after: 600)
        #expect(abs(restored - fullLevel) < 0.1)
        // The late stop the engine reports after the close changes nothing.
        scene.engine.post(.streamPlaying(stream: clip.id, playing: false))
        #expect(scene.session.snapshot.ducks.isEmpty)
    }

    @Test("the owner's limits apply: a duck deeper than the unit may take is refused with requestRejected")
    func limitsApply() throws {
        let limits = try UnitLimits(deepestDuckLevel: 0.5, excess: .refuse)
        let scene = try OfflineScene(
            policy: try SessionPolicy(unitLimits: ["social-feed": limits]))
        let events = RecordingDelegate()
        scene.session.delegate = events
        let clip = try Self.overlay(scene, owner: "social-feed")
        scene.engine.post(.streamPlaying(stream: clip.id, playing: true))
        #expect(scene.session.snapshot.ducks.isEmpty)
        #expect(events.kinds.contains { if case .requestRejected = $0 { true } else { false } })
        scene.engine.post(.streamPlaying(stream: clip.id, playing: false))
        #expect(abs(try scene.mainLevel(after: 300) - fullLevel) < 0.1)
        clip.close()
    }

    @Test("ignored for the main stream and for a stream no unit owns")
    func ignored() throws {
        let scene = try OfflineScene()
        let host = try Self.overlay(scene, owner: nil)
        scene.engine.post(.streamPlaying(stream: scene.main.id, playing: true))
        scene.engine.post(.streamPlaying(stream: host.id, playing: true))
        #expect(scene.session.snapshot.ducks.isEmpty)
        #expect(abs(try scene.mainLevel(after: 300) - fullLevel) < 0.1)
        host.close()
    }
}
