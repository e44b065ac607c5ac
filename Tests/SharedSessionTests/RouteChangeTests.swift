import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

@Suite("Route changes")
struct RouteChangeTests {
    @Test(
        "old device unavailable pauses the main stream; other reasons are reported and change nothing else",
        arguments: [RouteChangeReason.newDeviceAvailable, .categoryChange, .override, .routeConfigurationChange])
    func routeReasons(reason: RouteChangeReason) throws {
        let scene = try OfflineScene()
        let delegate = RecordingDelegate()
        scene.session.delegate = delegate
        scene.session.handle(
            .routeChanged(RouteChange(reason: reason, previousOutput: "speaker", currentOutput: "headphones")))
        #expect(!scene.session.snapshot.isMainPaused)
        #expect(scene.session.snapshot.currentRoute == "headphones")
        #expect(delegate.routeChanges.map(\.reason) == [reason])

        scene.session.handle(
            .routeChanged(
                RouteChange(reason: .oldDeviceUnavailable, previousOutput: "headphones", currentOutput: "speaker")))
        #expect(scene.session.snapshot.isMainPaused)
        #expect(delegate.kinds.contains(.mainPlaybackChanged(isPaused: true)))
        #expect(try isSilent(try scene.renderMain(milliseconds: 100), lastMilliseconds: 50))
        scene.session.play()
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
    }

    @Test("a route change the engine observes arrives as an event with its reason")
    func engineRouteChange() throws {
        let scene = try OfflineScene()
        let delegate = RecordingDelegate()
        scene.session.delegate = delegate
        let change = RouteChange(reason: .routeConfigurationChange, currentOutput: "null-sink-2")
        scene.engine.post(.system(.routeChanged(change)))
        #expect(delegate.events.last?.cause == .system(.routeChanged(change)))
        #expect(delegate.events.last?.kind == .routeChanged(change))
        #expect(delegate.routeChanges == [change])
    }
}
