public import SharedSession
import Synchronization

/// A room's acoustic path for testing echo cancellation: a source that plays what another stream
/// recorded into `ring` (a sink's monitor, say) `delayFrames` behind it, however the two streams'
/// cycles fall. A plain ring source plays whatever is queued, so its delay is whatever the two streams'
/// start-up left in the ring: on a busy machine anything from none to several times the delay asked,
/// and a canceller's figure then follows the room rather than the canceller. An acoustic path does not
/// change its length when the machine is busy; this one does not either.
///
/// ```swift
/// let ring = try AudioRingBuffer(minimumCapacity: 48_000 * 2)   // the monitor's recording writes it
/// let echo = DelayLine(ring: ring, delayFrames: 48_000 * 60 / 1000)   // 60 ms of room
/// ```
///
/// Render thread only, as every ``SharedSession/AudioSource`` is: it never locks, allocates or waits.
public final class DelayLine: AudioSource {
    /// What the path plays from, oldest first.
    public let ring: AudioRingBuffer
    /// The delay held, in frames.
    public let delayFrames: Int
    /// The fewest and most frames held at a render since the line first filled.
    private let fewest = Atomic<Int>(Int.max)
    private let most = Atomic<Int>(0)

    /// A path that plays `ring` `delayFrames` behind what was written into it.
    public init(ring: AudioRingBuffer, delayFrames: Int) {
        self.ring = ring
        self.delayFrames = delayFrames
    }

    /// The fewest and most frames of delay the echo was played with, after the line first filled: a
    /// run whose range is wider than a quantum did not hold its room.
    public var heldRange: ClosedRange<Int> {
        let low = fewest.load(ordering: .relaxed)
        return low == Int.max ? 0...0 : low...max(low, most.load(ordering: .relaxed))
    }

    /// Silence until `delayFrames` of history are queued, then the frames that many behind the newest,
    /// dropping the oldest when the writer ran ahead.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
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
