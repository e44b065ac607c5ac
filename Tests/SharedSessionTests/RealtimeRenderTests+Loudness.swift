import CRealtimeProbe
import Foundation
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

extension RealtimeRenderTests {
    @Test(
        "a stream under a loudness duck, and the voice whose loudness it reads, render with no allocation, lock or system call"
    )
    func loudnessDuckKernelIsRealtimeSafe() throws {
        try Probe.require()
        // A voice at a steady level with pauses, and a movie: noise-like, loud enough to be ducked.
        let voiceSamples = VoiceActivityTests.bursts([(100, 0), (900, 0.3), (300, 0), (900, 0.3), (400, 0)])
        let voice = StreamRenderer(
            source: try PCMBufferSource(samples: voiceSamples, loops: true), gain: 1, paused: false)
        let movieSamples = (0..<9600).flatMap { index -> [Float] in
            let value = Float(sin(Double(index) * 0.37) * 0.2 + sin(Double(index) * 0.011) * 0.2)
            return [value, value]
        }
        let main = StreamRenderer(
            source: try PCMBufferSource(samples: movieSamples, loops: true), gain: 1, paused: false)
        let meter = try #require(voice.activityMeter())
        meter.configure(threshold: 0.01, holdFrames: 57_600)
        meter.measureLoudness()
        main.setActivityDuck(
            gain: 1, following: [meter],
            loudness: LoudnessFollowing(slots: [LoudnessSlot(margin: 10, deepest: -30)], policy: .default),
            attack: .milliseconds(20), release: .milliseconds(400))
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 8192 * 2)
        defer { output.deallocate() }
        // Warm-up on this thread first, as the real-time notes require.
        voice.render(into: output, frames: 1024, accumulate: false, suspended: false)
        main.render(into: output, frames: 1024, accumulate: false, suspended: false)
        CRealtimeProbe_reset()
        var callbacks = 0
        var deepest: Float = 0
        for frames in [256, 1024, 4096, 333] {
            for _ in 0..<48 {
                CRealtimeProbe_armCurrentThread()
                voice.render(into: output, frames: frames, accumulate: false, suspended: false)
                main.render(into: output, frames: frames, accumulate: false, suspended: false)
                CRealtimeProbe_disarmCurrentThread()
                callbacks += 2
                deepest = min(deepest, main.loudnessDuck?.depth ?? 0)
            }
        }
        let counts = CRealtimeProbe_read()
        print(
            "[measure] loudness-duck kernel: \(callbacks) callbacks, \(counts.allocations) allocations, "
                + "\(counts.frees) frees, \(counts.locks) locks, \(counts.syscalls) syscalls; deepest \(deepest) dB"
        )
        #expect(counts.allocations == 0, "last counted call: \(String(cString: CRealtimeProbe_lastCall()))")
        #expect(counts.frees == 0)
        #expect(counts.locks == 0)
        #expect(counts.syscalls == 0, "last counted call: \(String(cString: CRealtimeProbe_lastCall()))")
        // The duck really measured and moved while counted.
        #expect(deepest < -3, "the loudness duck never went down")
        #expect(main.loudnessDuck?.sourceLoudness != nil)
    }
}
