import Testing

@testable import SharedSessionMedia

/// How long the decoder thread sleeps when it has nothing to do: woken by control calls, otherwise
/// back before the render side has played the ring down to its low watermark.
@Suite("Decoder sleep")
struct DecoderSleepTests {
    static let ring = 32_768
    static let lowWatermark = ring / 8 * 5

    static func sleep(playing: Bool = true, tookSeek: Bool = true, ended: Bool = false, fill: Int) -> Int? {
        DecoderLoop.idleSleep(
            playing: playing, renderTookLatestSeek: tookSeek, ended: ended, endRendered: false, fill: fill,
            lowWatermark: lowWatermark)
    }

    @Test("paused, the decoder sleeps until a control call wakes it")
    func pausedSleepsUntilWoken() {
        #expect(Self.sleep(playing: false, fill: Self.ring) == nil)
    }

    @Test("playing with a full ring, it sleeps the time the render side takes to play down to the low watermark")
    func fullRingSleepsUntilLowWatermark() {
        // (32,768 − 20,480) frames at 48 kHz: 256 ms.
        #expect(Self.sleep(fill: Self.ring) == 256_000_000)
        #expect(Self.sleep(fill: Self.lowWatermark) == 20_000_000)
    }

    @Test("after a seek the render side has not taken up, a full ring is mostly stale: it looks again in 20 ms")
    func staleRingAfterSeekIsNotSleptOn() {
        // The ring is full, but only the reserve's 8,192 frames (171 ms) are the new position's: sleeping
        // 256 ms on it ran the ring dry on PipeWire, 2 to 5 underruns after a seek.
        #expect(Self.sleep(tookSeek: false, fill: Self.ring) == 20_000_000)
    }

    @Test("an end the render side played after the decoder's last report is reported before it sleeps for good")
    func endReportedBeforeSleepingForGood() {
        let ended = { (reported: Bool) in
            DecoderLoop.idleSleep(
                playing: true, renderTookLatestSeek: true, ended: true, endRendered: true, endReported: reported,
                fill: 0, lowWatermark: Self.lowWatermark)
        }
        // A `seek close to the end` run under ThreadSanitizer waited 60 s for an endOfStream that a
        // decoder asleep for good never sent.
        #expect(ended(false) == 0)
        #expect(ended(true) == nil)
    }
}
