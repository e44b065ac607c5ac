import SharedSession
import Synchronization

/// A capture's timing, buffer by buffer: for each buffer the capture received, the frames received
/// before it and the figures `pw_stream_get_time_n` gave for it. A test reads it to place what a
/// recording of a sink's monitor holds on the monotonic clock, and so measure when a frame was
/// played against what a clock said.
///
/// Written by the capture's process callback, read by any thread: each entry is written before the
/// count that publishes it (release, acquire), and never again; entries past ``capacity`` are
/// dropped.
@_spi(Testing) public final class CaptureStamps: @unchecked Sendable {
    // @unchecked: `storage` is written only by the one process callback, each entry once, before
    // `count` publishes it with release ordering; readers read only entries below the count they
    // loaded with acquire ordering.

    /// One captured buffer's timing.
    public struct Stamp: Sendable, Hashable {
        /// Frames captured before this buffer.
        public var frame: Int
        /// `pw_time.now`: the monotonic nanoseconds of the graph cycle the buffer came in.
        public var now: Int64
        /// `pw_time.delay`, in ticks of `rateNumerator / rateDenominator` seconds.
        public var delay: Int64
        /// `pw_time.rate`: the graph's tick is `rateNumerator / rateDenominator` seconds.
        public var rateNumerator: UInt32
        public var rateDenominator: UInt32
        /// `pw_time.queued` and `pw_time.buffered`, in frames.
        public var queued: UInt64
        public var buffered: UInt64
        /// Frames in the buffer.
        public var frames: Int
    }

    /// The most buffers stamped.
    public let capacity: Int
    private let storage: UnsafeMutablePointer<Stamp>
    private let count = Atomic<Int>(0)
    /// Frames received so far (process callback only).
    private let received = Atomic<Int>(0)

    /// Stamps for up to `capacity` buffers (65,536 by default: nearly six minutes at quantum 256).
    public init(capacity: Int = 65_536) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit {
        storage.deallocate()
    }

    /// The buffers stamped so far.
    public var stamps: [Stamp] {
        let total = count.load(ordering: .acquiring)
        return (0..<total).map { storage[$0] }
    }

    /// Process callback: stamps a buffer of `frames` frames with `time`.
    @inline(__always)
    func note(frames: Int, now: Int64, delay: Int64, rate: (UInt32, UInt32), queued: UInt64, buffered: UInt64) {
        let before = received.load(ordering: .relaxed)
        received.store(before &+ frames, ordering: .relaxed)
        let index = count.load(ordering: .relaxed)
        guard index < capacity else { return }
        (storage + index).initialize(
            to: Stamp(
                frame: before, now: now, delay: delay, rateNumerator: rate.0, rateDenominator: rate.1, queued: queued,
                buffered: buffered, frames: frames))
        count.store(index &+ 1, ordering: .releasing)
    }
}
