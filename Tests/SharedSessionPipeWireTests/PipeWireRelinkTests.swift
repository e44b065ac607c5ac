import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTesting
import Testing

extension SessionRig {
    /// A rig playing the main stream ducked under a generic lease, whose private daemon was then
    /// killed by pid (connectionLost seen): for the tests of what comes back after a restart.
    static func killedWhileDucked() async throws -> (
        rig: SessionRig, lease: SessionLease, duck: DuckLease, ducked: Double, killedAt: ContinuousClock.Instant
    ) {
        try Daemon.requirePrivate()
        let rig = try SessionRig()
        let lease = try rig.session.acquire(.generic, owner: "host")
        _ = try rig.openMain()
        try await rig.recorder.waitForTone(mainTone, atLeast: SharedSessionPipeWireTests.mainLevel - 1)
        let duck = rig.session.duck(owner: "feed")
        try await rig.recorder.record(for: .milliseconds(400))
        let ducked = try rig.mainLevel()
        let pid = try #require(Daemon.pids().pipewire, "the daemon is not the script's own: cannot kill it")
        let killedAt = ContinuousClock.now
        kill(pid, SIGKILL)
        #expect(await rig.wait { if case .connectionLost = $0 { true } else { false } } != nil)
        return (rig, lease, duck, ducked, killedAt)
    }
}

extension DaemonTests {
    @Suite("PipeWire restarts with a late session manager")
    struct RelinkTests {
        @Test(
            "daemon: restarted with WirePlumber 1.5 s late, the engine reconnects before anything links and its streams still come back",
            .privateDaemonOnly
        )
        func lateSessionManager() async throws {
            let (rig, lease, duck, ducked, killedAt) = try await SessionRig.killedWhileDucked()
            defer { rig.stop() }
            setenv("SHAREDSESSION_PW_SESSION_MANAGER_DELAY", "1.5", 1)
            defer { unsetenv("SHAREDSESSION_PW_SESSION_MANAGER_DELAY") }
            try Daemon.ensureRunning()
            unsetenv("SHAREDSESSION_PW_SESSION_MANAGER_DELAY")
            let restartedAfter = ContinuousClock.now - killedAt
            let event = await rig.wait(timeout: .seconds(10)) { if case .reconnected = $0 { true } else { false } }
            #expect(event != nil, "no reconnected event; events \(rig.events)")
            let backMark = try await rig.recorder.waitForTone(mainTone, atLeast: ducked - 1, timeout: .seconds(8))
            let backAfter = ContinuousClock.now - killedAt
            try await rig.recorder.record(for: .milliseconds(300))
            let afterRestart = try rig.mainLevel()
            print(
                "[measure] late session manager: daemon and WirePlumber up \(restartedAfter.milliseconds) ms after "
                    + "the kill, "
                    + "ducked main back in the recording \(backAfter.milliseconds) ms after it (frame \(backMark)) at "
                    + "\(afterRestart) dBFS"
            )
            // Measured (three runs): the same ducked level to 0.0000001 dB, restored to 0.0000001 dB.
            #expect(abs(afterRestart - ducked) <= 0.1, "still ducked after the restart")
            duck.release()
            try await rig.recorder.record(for: .milliseconds(700))
            let restored = try rig.mainLevel()
            print("[measure] late session manager: restored main \(restored - mainLevel) dB from its level")
            #expect(abs(restored - mainLevel) <= 0.1)
            lease.release()
        }
    }
}
