import Foundation
import SharedSession
import Testing

@testable import SharedSessionMedia

/// What a damaged file's times do to the decoder: the fuzzer (Scripts/fuzz media) found a Matroska
/// file whose gap began at a negative time, and the message naming it trapped
/// (`String(repeating:count:)` with a negative count). Its input is kept in Fuzz/Regressions/media.
@Suite("Damaged times in media files")
struct DamagedTimeTests {
    static let regressions = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Fuzz/Regressions/media")

    @Test("times in messages keep their sign, and a time past any clock is written as it is")
    func secondsInMessages() {
        #expect(DecoderLoop.seconds(1.5) == "1.500 s")
        #expect(DecoderLoop.seconds(0.0123) == "0.012 s")
        #expect(DecoderLoop.seconds(-0.0123) == "-0.012 s")
        #expect(DecoderLoop.seconds(-12.5) == "-12.500 s")
        #expect(DecoderLoop.seconds(-0.0001) == "0.000 s")
        #expect(DecoderLoop.seconds(1e300) == "1e+300 s")
        #expect(DecoderLoop.seconds(-.infinity) == "-inf s")
        #expect(DecoderLoop.seconds(.nan) == "nan s")
    }

    @Test("a length no Duration can hold, negative or not a number is no length; Int64 conversions clamp")
    func lengthsAndTicks() {
        #expect(MediaDecoder.duration(seconds: 2.5) == .milliseconds(2500))
        #expect(MediaDecoder.duration(seconds: 1e12) == nil)
        #expect(MediaDecoder.duration(seconds: -1) == nil)
        #expect(MediaDecoder.duration(seconds: .nan) == nil)
        #expect(MediaDecoder.clampedInt64(1e30) == .max)
        #expect(MediaDecoder.clampedInt64(-1e30) == .min)
        #expect(MediaDecoder.clampedInt64(.nan) == 0)
        #expect(MediaDecoder.clampedInt64(-42.9) == -42)
    }

    @Test("the fuzzer's Matroska file with a gap at a negative time plays, the damage reported with its sign")
    func negativeGapTime() async throws {
        let path = Self.regressions.appending(path: "negative-gap-time.mkv").path
        let source = try MediaFileSource(path: path, bufferFrames: 4096, startsPlaying: true)
        var buffer = [Float](repeating: 0, count: 2048)
        for _ in 0..<10 {
            try source.waitUntilReady(frames: 1024, timeout: .seconds(5))
            _ = buffer.withUnsafeMutableBufferPointer { source.render(into: $0.baseAddress!, frames: 1024) }
        }
        // The events emitted before anyone listened come first on every new stream; a deadline ends
        // the wait (cancelling the iteration) so a missing report fails instead of hanging.
        let events = source.events
        let collector = Task {
            var damage: [String] = []
            for await event in events {
                guard case .decodeError(let error) = event else { continue }
                damage.append(error.message)
                if error.message.contains(" at -") { break }
            }
            return damage
        }
        let deadline = Task {
            try await Task.sleep(for: .seconds(10))
            collector.cancel()
        }
        let damage = await collector.value
        deadline.cancel()
        print("[measure] negative-gap-time.mkv: \(damage)")
        #expect(damage.contains { $0.contains("of audio at -") && $0.contains("is damaged") })
    }
}
