import NIOCore
import NIOPosix
import SharedSession
import SharedSessionRemote
import SharedSessionTestSupport
import Testing

extension RemoteTests {
    /// A unit's calls from Swift concurrency and from a NIO event loop, in this process: the async forms
    /// wait on no thread, and a waiting form never waits on an event loop.
    @Suite("A unit's calls without waiting", .serialized)
    struct RemoteCallTests {
        @Test("the async calls connect, take a session and a duck, release them and leave")
        func asyncCalls() async throws {
            let rig = try RemoteRig("async")
            let remote = try await RemoteSession.connect(path: rig.server.path, owner: "async-unit")
            #expect(remote.welcome.owner == "async-unit")
            let voice = try await remote.acquire(.voice)
            let duck = try await remote.duck(.duck(level: 0.2))
            #expect(rig.session.snapshot.ducks.map(\.owner) == ["async-unit"])
            let snapshot = try await remote.snapshot()
            #expect(snapshot.leases.map(\.id) == [voice.id])
            #expect(snapshot.ducks.map(\.id) == [duck.id])
            try await duck.release()
            try await voice.release()
            #expect(rig.holders().isEmpty)
            await remote.leave()
            try waitUntil("the leave") { rig.releaseReasons("async-unit") == ["it left"] }
            try waitUntil("the connection to close") { !remote.isConnected }
        }

        @Test("on an event loop a waiting call is refused, sending nothing; the delegate's releases and a leave go")
        func callsOnAnEventLoop() throws {
            let rig = try RemoteRig("on-loop")
            let remote = try RemoteSession(path: rig.server.path, owner: "loop-unit")
            let delegate = remote.makeDelegate()
            delegate.requestAudioDucking()
            #expect(rig.session.snapshot.ducks.map(\.owner) == ["loop-unit"])
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let refused = try loop.submit { () -> SessionError? in
                do throws(SessionError) {
                    _ = try remote.acquire(.voice)
                    return nil
                } catch {
                    return error
                }
            }.wait()
            #expect(refused?.code == .invalidValue)
            #expect(rig.session.snapshot.leases.isEmpty, "nothing was sent")
            // A disable call cannot throw: on the loop its release is sent without waiting.
            try loop.submit { delegate.disableAudioDucking() }.wait()
            try waitUntil("the duck released from the loop") { rig.session.snapshot.ducks.isEmpty }
            #expect(delegate.heldCounts.ducks == 0)
            try loop.submit { remote.leave() }.wait()
            try waitUntil("the leave sent from the loop") { rig.releaseReasons("loop-unit") == ["it left"] }
        }
    }
}
