import SharedSession
import Synchronization

/// The bounds `PipeWireEchoCancelTests` keeps, printed beside the figures (kept in step with the test).
enum EchoBounds {
    /// The echo clearly cancelled: ERLE at least this, in dB.
    static let erle = 10.0
    /// The near-end talker kept: its level in the capture against in the microphone, in dB.
    static let nearEndKept = -10.0...1.0
}

/// The room's acoustic path: plays what the sink's monitor recorded into `ring`, `delayFrames` behind
/// it however the two streams' cycles fall. A plain ring source plays whatever is queued, so the delay
/// was whatever the two streams' start-up left in the ring: on a busy machine anything from none to
/// four times the delay asked, and the canceller's figure followed the room rather than the canceller.
/// Render thread only; it never locks, allocates or waits.
final class DelayLine: AudioSource {
    let ring: AudioRingBuffer
    let delayFrames: Int
    /// The fewest and most frames held at a render since the stream began playing the echo.
    private let fewest = Atomic<Int>(Int.max)
    private let most = Atomic<Int>(0)

    init(ring: AudioRingBuffer, delayFrames: Int) {
        self.ring = ring
        self.delayFrames = delayFrames
    }

    /// The fewest and most frames of delay the echo was played with (after the line first filled).
    var heldRange: ClosedRange<Int> {
        let low = fewest.load(ordering: .relaxed)
        return low == Int.max ? 0...0 : low...max(low, most.load(ordering: .relaxed))
    }

    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let channels = ring.channels
        var available = ring.availableToRead
        // Not `delayFrames` of history yet: silence, and the line fills while the monitor records.
        guard available >= delayFrames + frames else {
            buffer.update(repeating: 0, count: frames * channels)
            return frames
        }
        // More than a quantum beyond the delay (the monitor ran ahead): drop the oldest, through
        // `buffer` itself, which the read below then fills.
        while available > delayFrames + 2 * frames {
            available -= ring.read(into: buffer, frames: min(frames, available - delayFrames - frames))
        }
        let delay = available - frames
        if delay < fewest.load(ordering: .relaxed) { fewest.store(delay, ordering: .relaxed) }
        if delay > most.load(ordering: .relaxed) { most.store(delay, ordering: .relaxed) }
        return ring.read(into: buffer, frames: frames)
    }
}
