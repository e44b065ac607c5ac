import Synchronization

/// Hears whether a signal is active (someone speaks) as it is rendered or captured, and publishes,
/// for each block it measured, the span of frames that were active: what a voice-activity duck on
/// another stream reads on the render side, with no thread hop and no lock.
///
/// A frame is active while the signal's peak is at or above the threshold, and for the hold time
/// after it last was, so the gaps between words stay active. One writer (the thread that renders or
/// captures the signal) calls ``measure(_:frames:channels:)``; any number of readers call
/// ``activeSpan()``. Both sides are allocation-, lock- and syscall-free.
public final class ActivityMeter: @unchecked Sendable {
    // @unchecked: `framesBelow` is touched only by the single writer, inside `measure`; everything a
    // reader sees goes through the atomics.

    private let thresholdBits = Atomic<UInt32>(Float(0.01).bitPattern)
    private let holdFrameCount = Atomic<Int>(57_600)
    /// The last block's active span, packed: start in the high 32 bits, end in the low ones; a start of
    /// `UInt32.max` means no frame of the block was active.
    private let span = Atomic<UInt64>(ActivityMeter.pack(start: nil, end: 0))
    private let blocks = Atomic<UInt64>(0)

    // Writer only.
    private var framesBelow = Int.max / 2

    /// Creates a meter hearing speech above −40 dBFS with a 1.2 s hold at 48 kHz (``VoiceActivityPolicy/default``).
    public init() {}

    /// Sets what counts as active: a peak at or above `threshold` (linear, 0 through 1), held for
    /// `holdFrames` frames after the last such peak. Takes effect at the next measured block.
    public func configure(threshold: Float, holdFrames: Int) {
        thresholdBits.store(threshold.bitPattern, ordering: .relaxed)
        holdFrameCount.store(max(0, holdFrames), ordering: .releasing)
    }

    /// Measures one block of interleaved samples: the writer's side.
    public func measure(_ samples: UnsafePointer<Float>, frames: Int, channels: Int) {
        let threshold = Float(bitPattern: thresholdBits.load(ordering: .relaxed))
        let hold = holdFrameCount.load(ordering: .acquiring)
        var below = framesBelow
        var start: Int?
        var end = 0
        var index = 0
        for frame in 0..<frames {
            var peak: Float = 0
            for _ in 0..<channels {
                peak = max(peak, abs(samples[index]))
                index &+= 1
            }
            below = peak >= threshold ? 0 : min(below &+ 1, Int.max / 2)
            if below <= hold {
                if start == nil { start = frame }
                end = frame &+ 1
            }
        }
        framesBelow = below
        span.store(Self.pack(start: start, end: end), ordering: .relaxed)
        blocks.add(1, ordering: .releasing)
    }

    /// The frames of the last measured block that were active, as `start..<end` (empty: none), and
    /// the number of blocks measured so far, so a reader can tell a stale span from a new one.
    public func activeSpan() -> (start: Int, end: Int, block: UInt64) {
        let block = blocks.load(ordering: .acquiring)
        let packed = span.load(ordering: .relaxed)
        let start = UInt32(truncatingIfNeeded: packed >> 32)
        let end = Int(UInt32(truncatingIfNeeded: packed))
        return start == UInt32.max ? (0, 0, block) : (Int(start), end, block)
    }

    private static func pack(start: Int?, end: Int) -> UInt64 {
        let high = start.map { UInt64(UInt32(truncatingIfNeeded: $0)) } ?? UInt64(UInt32.max)
        return high << 32 | UInt64(UInt32(truncatingIfNeeded: end))
    }
}
