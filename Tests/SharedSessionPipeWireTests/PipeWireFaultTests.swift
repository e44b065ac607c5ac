import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import Testing

extension DaemonTests {
    @Suite("PipeWireEngine faults")
    struct FaultTests {
        @Test(
            "daemon: the session manager dying pauses our stream (a fault), a stream opened then never starts (a fault); restarting both daemons recovers",
            .privateDaemonOnly
        )
        func sessionManagerDeath() async throws {
            try Daemon.requirePrivate()
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            let pid = try #require(Daemon.pids().wireplumber, "the daemon is not the script's own: cannot kill it")
            kill(pid, SIGKILL)
            let paused = await rig.events.wait {
                if case .streamFault(mainID, let reason) = $0 { reason.contains("paused") } else { false }
            }
            #expect(paused != nil, "events: \(rig.events.all)")
            try rig.openOverlay()
            let never = await rig.events.wait(timeout: .seconds(6)) {
                if case .streamFault(overlayID, let reason) = $0 {
                    reason.contains("never reached STREAMING")
                } else {
                    false
                }
            }
            #expect(never != nil, "events: \(rig.events.all)")
            // Only restarting both daemons brings the links back (pipewire-headless.md).
            let restart = Daemon.script("restart")
            try #require(restart.status == 0, "\(restart.output)")
            #expect(await rig.events.wait { if case .reconnected = $0 { true } else { false } } != nil)
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.waitForTone(overlayTone, atLeast: overlayLevel - 1)
        }

        @Test(
            "daemon: the sink our streams play to going away is oldDeviceUnavailable, then they follow the new default",
            .privateDaemonOnly
        )
        func sinkDisappears() async throws {
            try Daemon.requirePrivate()
            let rig = try EngineRig()
            defer {
                Daemon.setDefaultSink(nil)
                rig.stop()
            }
            let original = try await rig.playMainOnDefaultSink()
            let name = "sharedsession-test-sink"
            let id = try Daemon.createNullSink(named: name)
            Daemon.setDefaultSink(name)
            let moved = await rig.events.wait {
                $0
                    == .system(
                        .routeChanged(
                            RouteChange(
                                reason: .routeConfigurationChange, previousOutput: original, currentOutput: name)))
            }
            #expect(moved != nil, "events: \(rig.events.all)")
            Daemon.run("pw-cli", ["destroy", "\(id)"])
            let gone = await rig.events.wait {
                $0 == .system(.routeChanged(RouteChange(reason: .oldDeviceUnavailable, previousOutput: name)))
            }
            #expect(gone != nil, "events: \(rig.events.all)")
            let back = await rig.events.wait {
                $0
                    == .system(
                        .routeChanged(
                            RouteChange(
                                reason: .routeConfigurationChange, previousOutput: name, currentOutput: original)))
            }
            #expect(back != nil, "events: \(rig.events.all)")
            // The streams follow the default back to the original sink, which the recorder records.
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
        }
    }
}
