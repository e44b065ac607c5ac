import CRealtimeProbe
import SharedSession
import Testing

/// The render kernel both engines run on their real-time thread makes no allocation, takes no lock
/// and makes no syscall() call in steady playback: counted, not assumed.
@Suite("Real-time render path")
struct RealtimeRenderTests {
    @Test("render kernel allocates nothing, locks nothing, makes no syscall in steady playback")
    func renderKernelIsRealtimeSafe() throws {
        guard CRealtimeProbe_isInterposing() != 0 else {
            print("skipped: the allocation probe does not interpose in this build (sanitizer runtime owns malloc)")
            return
        }
        let sine = try SineSource(frequency: 440, amplitude: 0.5)
        let buffer = try PCMBufferSource(samples: (0..<9600).map { Float($0 % 100) / 100 }, loops: true)
        let ring = try RingBufferSource(capacity: 1 << 16)
        ring.ring.write([Float](repeating: 0.25, count: 2 * 60_000))
        let sources: [any AudioSource] = [sine, buffer, ring]
        let renderers = sources.map { StreamRenderer(source: $0, gain: 1, paused: false) }
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 8192 * 2)
        defer { output.deallocate() }
        // Warm-up on this thread first, as the real-time notes require (generic metadata, lazy globals).
        for renderer in renderers { renderer.render(into: output, frames: 1024, accumulate: false, suspended: false) }

        let quanta = [256, 1024, 4096, 8192, 1024, 333]
        CRealtimeProbe_reset()
        var callbacks = 0
        for round in quanta.indices {
            for renderer in renderers {
                // Ramps, pauses and suspends change mid-stream, as they do in playback; the control
                // side runs outside the counted window, like a control thread would.
                renderer.setGain(round % 2 == 0 ? 0.1 : 1, rampFrames: 7200)
                renderer.setPaused(round == 3)
                CRealtimeProbe_armCurrentThread()
                for _ in 0..<8 {
                    renderer.render(into: output, frames: quanta[round], accumulate: true, suspended: round == 4)
                }
                CRealtimeProbe_disarmCurrentThread()
                callbacks += 8
            }
        }
        let counts = CRealtimeProbe_read()
        print(
            "render kernel: \(callbacks) callbacks, \(counts.allocations) allocations, \(counts.frees) frees, "
                + "\(counts.locks) locks, \(counts.syscalls) syscalls")
        #expect(callbacks == 144)
        #expect(counts.allocations == 0)
        #expect(counts.frees == 0)
        #expect(counts.locks == 0)
        #expect(counts.syscalls == 0)
    }

    @Test("the probe catches an allocation (positive control)")
    func probeCatchesAllocation() {
        guard CRealtimeProbe_isInterposing() != 0 else {
            print("skipped: the allocation probe does not interpose in this build")
            return
        }
        CRealtimeProbe_reset()
        CRealtimeProbe_armCurrentThread()
        let array = [Int](repeating: 7, count: Int.random(in: 100...200))
        CRealtimeProbe_disarmCurrentThread()
        #expect(array.count >= 100)
        #expect(CRealtimeProbe_read().allocations >= 1)
    }
}
