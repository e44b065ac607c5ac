import CRealtimeProbe
import Foundation
import SharedSession
import SharedSessionMedia
import Testing

/// The render side of a media source, counted on the thread that renders: no allocation, no free,
/// no lock, no syscall() — through steady playback, pauses, seeks, loops and underruns.
@Suite("Real-time render path")
struct RealtimeTests {
    @Test("render allocates, frees, locks and calls nothing, and real audio comes out")
    func renderIsRealtimeSafe() async throws {
        guard CRealtimeProbe_isInterposing() != 0 else {
            // Only the sanitizer build's runtime owns malloc; Scripts/test does not run this suite there.
            Issue.record("the allocation probe does not interpose in this build: run the suite without a sanitizer")
            return
        }
        let movie = try MediaFileSource(
            path: try MediaFiles.tone("probe.mp4", seconds: 4, rate: 44_100, layout: "5.1", codec: ["-c:a", "aac"]),
            startsPlaying: true)
        let loop = try MediaFileSource(
            path: try MediaFiles.tone("probe-loop.flac", frequency: 480, seconds: 0.1, codec: ["-c:a", "flac"]),
            startsPlaying: true)
        loop.isLooping = true
        let loops = EventRecorder(loop)
        let starved = try MediaFileSource(
            path: try MediaFiles.tone("probe-starved.wav", seconds: 4, codec: ["-c:a", "pcm_s16le"]),
            bufferFrames: 4096, startsPlaying: true
        )
        starved.setDecodeDelayForTesting(.milliseconds(3))
        let sources = [movie, loop, starved]
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 8192 * 2)
        defer { output.deallocate() }
        // Warm-up on this thread first, as the real-time notes require.
        for source in sources { _ = source.render(into: output, frames: 256) }

        let quanta = [256, 1024, 4096, 8192, 333, 1024, 128, 512]
        var heard: [Float] = []
        var callbacks = 0
        CRealtimeProbe_reset()
        for round in 0..<24 {
            // The control side acts between callbacks, as a host's main thread would.
            switch round {
            case 4: movie.pause()
            case 6: movie.play()
            case 9: try movie.seek(to: .milliseconds(2500))
            case 14: try movie.seek(to: .milliseconds(500))
            default: break
            }
            for source in sources { source.waitUntilBuffered(timeout: .milliseconds(100)) }
            let frames = quanta[round % quanta.count]
            for source in sources {
                CRealtimeProbe_armCurrentThread()
                let count = source.render(into: output, frames: frames)
                CRealtimeProbe_disarmCurrentThread()
                callbacks += 1
                if source === movie, round >= 16 {
                    heard.append(contentsOf: UnsafeBufferPointer(start: output, count: count * 2))
                }
            }
        }
        let counts = CRealtimeProbe_read()
        print(
            "media render: \(callbacks) callbacks, \(counts.allocations) allocations, \(counts.frees) frees, "
                + "\(counts.locks) locks, \(counts.syscalls) syscalls; \(loop.underrunCount) underruns in the "
                + "looping file, \(starved.underrunCount) in the starved one")
        #expect(callbacks == 72)
        #expect(counts.allocations == 0)
        #expect(counts.frees == 0)
        #expect(counts.locks == 0)
        #expect(counts.syscalls == 0)
        // Real audio came out of the counted calls: the movie's tone at its downmixed level.
        let left = Listen.channel(heard, 0)
        #expect(left.count > 9600)
        #expect(abs(Listen.level(left[480...]) - fiveOneLevel) < 0.1)
        // The counted calls went through the loop markers and the underrun path too.
        #expect(starved.underrunCount > 0)
        try await loops.waitFor { $0.contains(.looped) }
    }
}
