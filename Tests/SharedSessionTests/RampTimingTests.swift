import SharedSession
import Testing

/// When a ramp ends, in rendered samples, with and without the sound-server compensation.
@Suite("Ramp timing: a ramp ends its length after the call, as heard")
struct RampTimingTests {
    /// Renders `quantum` frames of a constant 0.5 at gain 1, asks for gain 0.1 over `ramp` frames, then
    /// renders 10,000 frames: returns the first frame (of those) at the target level and the largest
    /// sample-to-sample step on the way there.
    private func rampEnd(compensating: Bool, quantum: Int, ramp: Int) throws -> (end: Int, step: Float) {
        let source = try PCMBufferSource(samples: [Float](repeating: 0.5, count: 2 * 48_000), loops: true)
        let renderer = StreamRenderer(
            source: source, gain: 1, paused: false, shortensRampsByQueuedQuantum: compensating)
        var first = [Float](repeating: 0, count: 2 * quantum)
        first.withUnsafeMutableBufferPointer {
            renderer.render(into: $0.baseAddress!, frames: quantum, accumulate: false, suspended: false)
        }
        renderer.setGain(0.1, rampFrames: ramp)
        var output = [Float](repeating: 0, count: 2 * 10_000)
        output.withUnsafeMutableBufferPointer {
            renderer.render(into: $0.baseAddress!, frames: 10_000, accumulate: false, suspended: false)
        }
        let end = try #require((0..<10_000).first { output[2 * $0] == 0.05 })
        var step: Float = 0
        var previous: Float = 0.5
        for frame in 0...end {
            step = max(step, abs(output[2 * frame] - previous))
            previous = output[2 * frame]
        }
        return (end, step)
    }

    @Test(
        "a renderer for a sound server ends a 7200-frame ramp a queued quantum early (1024: frame 6175; 256: 6943), an offline one at frame 7199"
    )
    func shortenedByTheQueuedQuantum() throws {
        let offline = try rampEnd(compensating: false, quantum: 1024, ramp: 7200)
        #expect(offline.end == 7199)
        let server = try rampEnd(compensating: true, quantum: 1024, ramp: 7200)
        #expect(server.end == 7200 - 1024 - 1)
        let small = try rampEnd(compensating: true, quantum: 256, ramp: 7200)
        #expect(small.end == 7200 - 256 - 1)
        // Still a ramp, not a jump: the steepest step is the shortened ramp's slope.
        #expect(abs(server.step - 0.45 / Float(7200 - 1024)) < 1e-6)
    }

    @Test("a ramp shorter than two quanta is shortened by half at most: 1000 frames after a 1024 quantum take 500")
    func shortenedByHalfAtMost() throws {
        let server = try rampEnd(compensating: true, quantum: 1024, ramp: 1000)
        #expect(server.end == 499)
        #expect(abs(server.step - 0.45 / 500) < 1e-6)
    }
}
