import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTesting
import Testing

extension DaemonTests.EngineTests {
    /// PipeWire 0.3 changes the quantum under running streams; 1.x pauses every stream for a few
    /// milliseconds to set its buffers up again. With no pause reported, our audio has no gap (no
    /// step, no dip); with one reported (a renegotiation, never a fault), its gap is no longer than
    /// ``renegotiationGapLimit(quantum:)``, what a renegotiation can cost any client. `pw-play`'s gap
    /// on the same change is printed beside ours.
    @Test(
        "daemon: the quantum forced from 1024 to 4096 and back plays on, with no gap longer than a renegotiation's",
        .privateDaemonOnly
    )
    func quantumChangeHasNoGap() async throws {
        try Daemon.requirePrivate()
        let rig = try EngineRig()
        let reference = try ReferencePlayer(seconds: 10)
        defer {
            reference.stop()
            Daemon.forceQuantum(0)
            rig.stop()
        }
        try rig.openMain()
        let start = try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
        let referenceStart = try await reference.waitUntilPlaying()
        try await rig.recorder.record(for: .milliseconds(300))
        let initial = rig.engine.quantum
        Daemon.forceQuantum(4096)
        let forced = try await waitForQuantum(4096, of: rig.engine, recorder: rig.recorder)
        try await rig.recorder.record(for: .milliseconds(800))
        Daemon.forceQuantum(0)
        let after = try await waitForQuantum(initial, of: rig.engine, recorder: rig.recorder)
        try await rig.recorder.record(for: .milliseconds(800))
        let samples = rig.recorder.samples
        let end = samples.count / 2 - 480
        let step = try meter.largestStep(samples, frames: start + 480..<end)
        var lowest = 0.0
        var frame = start + 480
        while frame + 480 <= end {
            lowest = min(
                lowest, try meter.toneLevel(samples, frequency: mainTone, frames: window(frame, 480)) - mainLevel)
            frame += 240
        }
        let quanta = rig.events.all.compactMap { event -> Int? in
            if case .quantumChanged(let frames) = event { return frames } else { return nil }
        }
        let pauses = rig.events.all.compactMap { event -> Duration? in
            if case .streamRenegotiated(mainID, let paused) = event { paused } else { nil }
        }
        let ours = try longestGap(samples, frequency: mainTone, level: mainLevel, frames: start + 480..<end)
        let theirs = try reference.gap(from: referenceStart + 480)
        print(
            "[measure] quantum \(initial) -> \(forced) -> \(after); events \(quanta); largest step \(step); lowest 10 "
                + "ms window \(lowest) dB; gap ours \(ours) ms, pw-play's \(theirs) ms; renegotiation pauses \(pauses)"
        )
        #expect(forced == 4096)
        #expect(after == initial)
        #expect(quanta.contains(4096))
        if pauses.isEmpty {
            // The daemon changed the quantum under the running stream (0.3): not a sample lost.
            #expect(step < 0.07, "a 1 kHz 0.5 tone never steps more than 0.066")
            #expect(lowest > -0.5)
            #expect(ours == 0)
        } else {
            #expect(
                ours <= renegotiationGapLimit(quantum: forced),
                "our gap \(ours) ms, pw-play's \(theirs) ms, at a quantum of \(forced) frames")
        }
        #expect(!rig.events.all.contains { if case .streamFault = $0 { true } else { false } })
    }
}
