import CRealtimeProbe
import SharedSession
import Testing

/// What an open stream costs on the heap (issue 36): the figure BENCHMARKS.md reports as "memory per
/// open stream". The loudness meters of the loudness duck are made for the streams that use them, not
/// for every stream.
@Suite("Heap per stream", .enabled(if: CRealtimeProbe_isSanitized() == 0, "a sanitizer's runtime owns the heap"))
struct StreamHeapTests {
    /// Streams made per measurement: enough that the allocator's own slack averages out.
    static let count = 200

    /// The heap each of `count` objects made by `make` holds, in bytes, and the objects. Counted on this
    /// thread alone: the process's heap (mallinfo2) moved with the suites running beside it, and read
    /// 2,299 bytes a stream once where about 1,000 are held.
    static func heapEach<T>(_ make: () throws -> T) rethrows -> (bytes: Int, made: [T]) {
        CRealtimeProbe_countThreadHeap(1)
        defer { CRealtimeProbe_countThreadHeap(0) }
        let made = try (0..<count).map { _ in try make() }
        return (Int(CRealtimeProbe_threadHeap()) / count, made)
    }

    @Test("a stream no loudness duck measures or ducks holds no loudness meter; one that is gets its meters then")
    func loudnessMetersAreMadeWhenUsed() throws {
        let (each, renderers) = try Self.heapEach {
            StreamRenderer(source: try SineSource(frequency: 440, amplitude: 0.1), gain: 1, paused: false)
        }
        // The scratch buffer a mixing engine renders into (1024 frames), the renderer, its stages, its
        // activity meter and the source: about 1 KB beside the buffer. With the loudness meters made for
        // every stream it was 3 KB.
        let scratch = 1024 * AudioFormat.standard.channels * MemoryLayout<Float>.size
        #expect(each - scratch < 1_500, "\(each - scratch) bytes beside the scratch buffer")

        // Each stream's played audio measured for its loudness (the speech loudness: a meter and a ring
        // of 100 blocks), and each stream ducked by the loudness of the next (the ducked stream's meter).
        CRealtimeProbe_countThreadHeap(1)
        defer { CRealtimeProbe_countThreadHeap(0) }
        for (index, renderer) in renderers.enumerated() {
            let meter = try #require(renderers[(index + 1) % Self.count].activityMeter())
            meter.measureLoudness()
            renderer.setActivityDuck(
                gain: 1, following: [meter],
                loudness: LoudnessFollowing(slots: [LoudnessSlot(margin: 10, deepest: -20)], policy: .default),
                attack: .milliseconds(20), release: .milliseconds(400))
        }
        let added = Int(CRealtimeProbe_threadHeap()) / Self.count
        print(
            "[measure] heap per stream: \(each - scratch) bytes beside the scratch buffer; \(added) added by "
                + "the loudness meters")
        #expect(added > 1_500, "\(added) bytes added by the loudness meters")
    }
}
