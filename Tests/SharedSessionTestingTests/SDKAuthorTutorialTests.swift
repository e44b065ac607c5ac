import SharedSession
import SharedSessionTesting
import Testing

/// The code of the "Testing an overlay SDK" tutorial (SharedSessionTesting.docc), run as it is
/// written there, so the tutorial cannot drift from the API.

/// The SDK of the tutorial: plays a clip with the movie ducked under it.
final class ClipPlayer {
    private weak var host: (any OverlayAudioDelegate)?

    init(host: any OverlayAudioDelegate) { self.host = host }

    func play() throws {
        try host?.prepareAudioSession(for: .generic)
        host?.requestAudioDucking()
    }

    func stop() {
        host?.disableAudioDucking()
        host?.disableAudioSession(for: .generic)
    }
}

/// The same SDK with the bug the fake host is there to catch: it forgets to give the session back.
final class LeakyClipPlayer {
    private weak var host: (any OverlayAudioDelegate)?

    init(host: any OverlayAudioDelegate) { self.host = host }

    func play() throws {
        try host?.prepareAudioSession(for: .generic)
        host?.requestAudioDucking()
    }

    func stop() { host?.disableAudioDucking() }
}

@Suite("SDK author's tutorial")
struct SDKAuthorTutorialTests {
    @Test func hostKeepsTheContract() throws {
        try OverlayAudioConformance.verify { try .bridge(expectedDuckLevel: 0.1) }
    }

    @Test func clipPlayerGivesBackWhatItTakes() throws {
        let host = FakeOverlayHost()
        let player = ClipPlayer(host: host)
        try player.play()
        #expect(host.isDucked)
        #expect(host.activeType == .generic)
        player.stop()
        try host.verifyBalanced()
    }

    @Test func leakyClipPlayerIsCaughtByName() throws {
        let host = FakeOverlayHost()
        let player = LeakyClipPlayer(host: host)
        try player.play()
        player.stop()
        #expect(throws: FakeOverlayHost.Unbalanced.self) { try host.verifyBalanced() }
        #expect(host.imbalance.open.map(\.call) == [.prepareAudioSession(.generic)])
    }

    @Test func clipPlayerCopesWithARefusedSession() throws {
        let host = FakeOverlayHost()
        host.refusePrepare(of: .generic)
        let player = ClipPlayer(host: host)
        #expect(throws: FakeOverlayHost.PrepareRefused.self) { try player.play() }
        #expect(!host.isDucked)
        try host.verifyBalanced()
    }

    @Test func clipDucksTheMovieTwentyDecibels() async throws {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        let movie = try session.openMainStream(source: try SineSource(frequency: 1000, amplitude: 0.5))
        let log = EventLog(session: session)
        let bridge = OverlayAudioBridge(session: session, owner: "ClipPlayer")
        let player = ClipPlayer(host: bridge)
        let meter = LevelMeter()

        let before = try engine.render(duration: .milliseconds(200)).stem(movie.id)
        try player.play()
        let during = try engine.render(duration: .milliseconds(400)).stem(movie.id)
        player.stop()
        let after = try engine.render(duration: .milliseconds(600)).stem(movie.id)

        let full = try meter.toneLevel(before, frequency: 1000, frames: meter.last(milliseconds: 100, of: before))
        let ducked = try meter.toneLevel(during, frequency: 1000, frames: meter.last(milliseconds: 100, of: during))
        let restored = try meter.toneLevel(after, frequency: 1000, frames: meter.last(milliseconds: 100, of: after))
        #expect(abs(full - (-6.02)) <= 0.1)
        #expect(abs(ducked - full + 20) <= 0.1)
        #expect(abs(restored - full) <= 0.1)
        #expect(try meter.largestStep(during + after) < 0.07)

        let duck = await log.wait { $0.kind == .mainGainChanged(from: 1, to: 0.1) }
        guard case .duckLease(_, let owner) = duck?.cause else {
            Issue.record("no duck event; events: \(log.all)")
            return
        }
        #expect(owner == "ClipPlayer")
    }
}
