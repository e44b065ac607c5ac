import CRealtimeProbe
import Foundation
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

extension RealtimeRenderTests {
    @Test(
        "a stream following another's activity, and the meter it reads, render with no allocation, lock or system call")
    func voiceActivityKernelIsRealtimeSafe() throws {
        try Probe.require()
        let voiceSamples = VoiceActivityTests.bursts([(100, 0), (300, 0.3), (400, 0), (300, 0.3), (900, 0)])
        let voice = StreamRenderer(
            source: try PCMBufferSource(samples: voiceSamples, loops: true), gain: 1, paused: false)
        let main = StreamRenderer(
            source: try PCMBufferSource(samples: [0.5, 0.5], loops: true), gain: 1, paused: false)
        let meter = try #require(voice.activityMeter())
        meter.configure(threshold: 0.01, holdFrames: 14_400)
        main.setActivityDuck(gain: 0.1, following: [meter], attack: .milliseconds(20), release: .milliseconds(400))
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 8192 * 2)
        defer { output.deallocate() }
        // Warm-up on this thread first, as the real-time notes require.
        voice.render(into: output, frames: 1024, accumulate: false, suspended: false)
        main.render(into: output, frames: 1024, accumulate: false, suspended: false)
        CRealtimeProbe_reset()
        var lowest: Float = 1
        var highest: Float = 0
        var callbacks = 0
        for frames in [256, 1024, 4096, 333] {
            for _ in 0..<24 {
                CRealtimeProbe_armCurrentThread()
                voice.render(into: output, frames: frames, accumulate: false, suspended: false)
                main.render(into: output, frames: frames, accumulate: false, suspended: false)
                CRealtimeProbe_disarmCurrentThread()
                callbacks += 2
                lowest = min(lowest, output[frames * 2 - 2])
                highest = max(highest, output[frames * 2 - 2])
            }
        }
        let counts = CRealtimeProbe_read()
        print(
            "[measure] voice-activity kernel: \(callbacks) callbacks, \(counts.allocations) allocations, "
                + "\(counts.frees) frees, \(counts.locks) locks, \(counts.syscalls) syscalls; main between \(lowest) "
                + "and \(highest)"
        )
        #expect(counts.allocations == 0, "last counted call: \(String(cString: CRealtimeProbe_lastCall()))")
        #expect(counts.frees == 0)
        #expect(counts.locks == 0)
        #expect(counts.syscalls == 0, "last counted call: \(String(cString: CRealtimeProbe_lastCall()))")
        // The main really followed the voice while counted: ducked to 0.05 and back to 0.5.
        #expect(abs(lowest - 0.05) < 1e-4)
        #expect(abs(highest - 0.5) < 1e-4)
    }
}
