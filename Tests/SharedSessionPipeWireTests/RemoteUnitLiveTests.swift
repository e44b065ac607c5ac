import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionRemote
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    @Suite("A unit in another process, on PipeWire")
    struct RemoteUnitLiveTests {
        @Test(
            "daemon: a remote unit ducks the movie by 20 dB; killed mid-call, the movie comes back within 0.5 dB, 10 times"
        )
        func killedMidCall() async throws {
            let rig = try SessionRig()
            defer { rig.stop() }
            let server = try SessionServer(session: rig.session, path: socketPath("live"))
            defer { server.close() }
            let hostLease = try rig.session.acquire(.generic, owner: "player")
            _ = try rig.openMain()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(300))
            let before = try rig.mainLevel()

            // The in-process twin, heard in the same run: the host's own duck to -19 dB.
            let localMark = rig.recorder.mark()
            let local = rig.session.duck(owner: "player")
            try await rig.recorder.record(for: .milliseconds(400))
            // The end first: `mark()` takes in what arrived since, so samples read after it hold it all
            // (read before it, they were a quantum short of the range once in CI).
            let localEnd = rig.recorder.mark()
            let localReached = try #require(
                try meter.firstWindowEnd(
                    rig.recorder.samples, frequency: mainTone, atOrBelow: before - 19, frames: localMark..<localEnd))
            local.release()
            try await rig.recorder.record(for: .milliseconds(700))

            var duckLatencies: [Double] = []
            var restoreStarts: [Double] = []
            for cycle in 0..<10 {
                let unit = try UnitProcess(["--socket", server.path, "--owner", "voice-chat"])
                #expect(try unit.line().hasPrefix("ok welcome voice-chat"))
                #expect(try unit.ask("acquire voice").hasSuffix(" voice"))
                let duckMark = rig.recorder.mark()
                #expect(try unit.ask("duck").hasPrefix("ok lease"))
                try await rig.recorder.record(for: .milliseconds(400))
                let duckEnd = rig.recorder.mark()
                let ducked = try rig.mainLevel(before: duckEnd)
                #expect(abs(ducked - before + 20) <= 0.5, "cycle \(cycle): ducked \(ducked - before) dB")
                let reached = try #require(
                    try meter.firstWindowEnd(
                        rig.recorder.samples, frequency: mainTone, atOrBelow: before - 19, frames: duckMark..<duckEnd))
                duckLatencies.append(milliseconds(reached - duckMark))

                unit.kill()
                let killMark = rig.recorder.mark()
                try await rig.recorder.record(for: .milliseconds(800))
                let restored = try rig.mainLevel()
                #expect(abs(restored - before) <= 0.5, "cycle \(cycle): restored to \(restored - before) dB")
                let samples = rig.recorder.samples
                let start = try #require(
                    try meter.firstWindowEnd(
                        samples, frequency: mainTone, atOrAbove: ducked + 0.1, frames: killMark..<(samples.count / 2)))
                restoreStarts.append(milliseconds(start - killMark))
                #expect(rig.session.snapshot.leases.map(\.id) == [hostLease.id], "cycle \(cycle)")
                #expect(rig.session.snapshot.ducks.isEmpty, "cycle \(cycle)")
            }
            duckLatencies.sort()
            restoreStarts.sort()
            let quantum = Double(rig.engine.quantum) / 48
            print(
                "[measure] remote unit on PipeWire: duck call → -19 dB heard, in-process "
                    + "\(milliseconds(localReached - localMark)) ms, "
                    + "remote (unit process) median \(duckLatencies[5]) ms, max \(duckLatencies.last!) ms; "
                    + "reaped → restore start heard median \(restoreStarts[5]) ms, max \(restoreStarts.last!) ms "
                    + "(quantum \(quantum) ms, 10 ms analysis window)")
            // Released on the host within a quantum of the reap (SharedSessionRemoteTests checks that on
            // the clock); heard: the cycle that takes the new gain (one quantum), the graph's queued
            // quantum before the monitor, the 10 ms analysis window, and the 5 ms a 400 ms ramp from 0.1
            // takes to rise 0.1 dB, on a quiet machine; the reap and the host's release are not real-time,
            // so a loaded machine keeps five times that.
            #expect(restoreStarts.last! <= LoadedMachine.bound(milliseconds: 2 * quantum + 10 + 5))
        }
    }
}
