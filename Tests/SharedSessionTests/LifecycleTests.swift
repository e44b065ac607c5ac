import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

@Suite("App lifecycle and suspend")
struct LifecycleTests {
    @Test(
        "ambient and soloAmbient suspend in the background and wake in the foreground",
        arguments: [AudioSessionCategory.ambient, .soloAmbient])
    func ambientSuspends(category: AudioSessionCategory) throws {
        let policy = try SessionPolicy(genericConfiguration: SessionConfiguration(category: category))
        let scene = try OfflineScene(policy: policy)
        let lease = try scene.session.acquire(.generic, owner: "host")
        scene.session.handle(.didEnterBackground)
        #expect(scene.session.snapshot.isSuspended)
        #expect(try isSilent(try scene.renderMain(milliseconds: 100), lastMilliseconds: 50))
        scene.session.handle(.willEnterForeground)
        #expect(!scene.session.snapshot.isSuspended)
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
        lease.release()
    }

    @Test("playback and playAndRecord keep rendering in the background", arguments: [AudioSessionType.generic, .voice])
    func playbackKeepsRendering(type: AudioSessionType) throws {
        let scene = try OfflineScene()
        let lease = try scene.session.acquire(type, owner: "host")
        scene.session.handle(.didEnterBackground)
        #expect(!scene.session.snapshot.isSuspended)
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
        lease.release()
    }

    @Test("suspendInBackground suspends playback too")
    func suspendInBackgroundFlag() throws {
        let scene = try OfflineScene(policy: try SessionPolicy(suspendInBackground: true))
        let lease = try scene.session.acquire(.generic, owner: "host")
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
        scene.session.handle(.didEnterBackground)
        #expect(scene.session.snapshot.isSuspended)
        #expect(try isSilent(try scene.renderMain(milliseconds: 100), lastMilliseconds: 50))
        scene.session.handle(.willEnterForeground)
        #expect(!scene.session.snapshot.isSuspended)
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.1)
        lease.release()
    }

    @Test("suspend and wake by hand; renderAnyway keeps the sources running with the output muted")
    func manualSuspend() throws {
        let scene = try OfflineScene(signal: .constant)
        scene.session.suspend()
        #expect(scene.session.snapshot.isSuspended)
        #expect(try isSilent(try scene.renderMain(milliseconds: 100), lastMilliseconds: 50))
        scene.session.wakeFromSuspend()
        #expect(!scene.session.snapshot.isSuspended)
        #expect(abs(try scene.renderMain(milliseconds: 100).last! - 0.5) < 1e-6)

        let before = scene.engine.framesRendered
        scene.session.suspend(renderAnyway: true)
        let muted = try scene.renderMain(milliseconds: 300)
        #expect(try isSilent(muted, lastMilliseconds: 50))
        #expect(scene.engine.framesRendered - before == 14_400)
        scene.session.wakeFromSuspend()
        #expect(abs(try scene.renderMain(milliseconds: 500).last! - 0.5) < 1e-6)
    }
}
