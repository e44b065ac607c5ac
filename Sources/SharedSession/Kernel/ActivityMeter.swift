import Synchronization

/// Hears whether a signal is active (someone speaks) as it is rendered or captured, and publishes,
/// for each block it measured, the span of frames that were active: what a voice-activity duck on
/// another stream reads on the render side, with no thread hop and no lock.
///
/// A frame is active while the signal's peak is at or above the threshold, and for the hold time
/// after it last was, so the gaps between words stay active. One writer (the thread that renders or
/// captures the signal) calls ``measure(_:frames:channels:)``; any number of readers call
/// ``activeSpan()``. Both sides are allocation-, lock- and syscall-free.
///
/// Once asked to (``measureLoudness()``, for a loudness duck that follows the signal), it also
/// measures the signal's loudness while it speaks: the BS.1770 gated loudness of the 400 ms blocks
/// ending in the last 100 ``speechSteps`` (10 s of speech) in which its peak reached the threshold,
/// published as ``speechLoudness``. The pauses between words and turns do not count, and a speaker's
/// level is steady over that span, so the figure holds through a conversation. The same gating over
/// the last ``recentSpeechSteps`` (2 s of speech) is published as ``recentSpeechLoudness``: it tells a
/// speaker quieter than the one before within a turn's first seconds.
public final class ActivityMeter: @unchecked Sendable {
    // @unchecked: `framesBelow` and the speech loudness's state are touched only by the single writer,
    // inside `measure`; everything a reader sees goes through the atomics.

    private let thresholdBits = Atomic<UInt32>(Float(0.01).bitPattern)
    private let holdFrameCount = Atomic<Int>(57_600)
    /// The last block's active span, packed: start in the high 32 bits, end in the low ones; a start of
    /// `UInt32.max` means no frame of the block was active.
    private let span = Atomic<UInt64>(ActivityMeter.pack(start: nil, end: 0))
    private let blocks = Atomic<UInt64>(0)

    /// The speech loudness, made by the first ``measureLoudness()`` (nil until then: the loudness is not
    /// measured); retained here until the meter is deinitialised, read unretained by the writer.
    private let speech = Atomic<Unmanaged<SpeechLoudness>?>(nil)
    /// The 100 ms steps of speech the loudness is taken over: 10 s of speech.
    public static let speechSteps = SpeechLoudness.speechSteps
    /// The 100 ms steps of speech the recent loudness is taken over: 2 s of speech.
    public static let recentSpeechSteps = SpeechLoudness.recentSpeechSteps
    /// The loudness while active, LUFS as Float bits (−∞ before any speech): over ``speechSteps`` and
    /// over ``recentSpeechSteps``.
    private let speechLoudnessBits = Atomic<UInt32>((-Float.infinity).bitPattern)
    private let recentLoudnessBits = Atomic<UInt32>((-Float.infinity).bitPattern)
    /// The 400 ms blocks of speech the loudness is taken over, once one was voiced throughout (0 while
    /// the figure comes from single steps).
    private let wholeBlocks = Atomic<Int>(0)

    /// The format measured, for the speech loudness's K-weighting.
    private let format: AudioFormat

    // Writer only.
    private var framesBelow = Int.max / 2

    /// Creates a meter hearing speech above −40 dBFS with a 1.2 s hold at 48 kHz (``VoiceActivityPolicy/default``),
    /// of stereo audio at 48 kHz.
    public convenience init() { self.init(format: .standard) }

    /// Creates a meter of audio in `format` (its rate sets the K-weighting of the loudness).
    public init(format: AudioFormat) {
        self.format = format
    }

    deinit { speech.load(ordering: .acquiring)?.release() }

    /// Starts measuring the loudness of the signal while it speaks. Allocates the loudness meter and
    /// its speech ring on the first call (control side: never call it on a render thread); later calls
    /// do nothing.
    public func measureLoudness() {
        guard speech.load(ordering: .acquiring) == nil, let made = SpeechLoudness(format: format) else { return }
        let retained = Unmanaged.passRetained(made)
        // Two first calls at once: the one that lost the exchange gives its own back.
        if !speech.compareExchange(expected: nil, desired: retained, ordering: .acquiringAndReleasing).exchanged {
            retained.release()
        }
    }

    /// The signal's loudness while it speaks, in LUFS: the gated loudness of its last speech blocks;
    /// `nil` before ``measureLoudness()`` or before any speech.
    public var speechLoudness: Float? {
        let value = Float(bitPattern: speechLoudnessBits.load(ordering: .relaxed))
        return value.isFinite ? value : nil
    }

    /// The signal's loudness over its last 2 s of speech (``recentSpeechSteps`` blocks), gated as
    /// ``speechLoudness`` is; `nil` when that is.
    public var recentSpeechLoudness: Float? {
        let value = Float(bitPattern: recentLoudnessBits.load(ordering: .relaxed))
        return value.isFinite ? value : nil
    }

    /// How many 400 ms blocks of speech ``speechLoudness`` is taken over, up to ``speechSteps``: 0 while
    /// it is a first figure from single voiced steps (before a block voiced throughout), which reads
    /// low.
    public var speechBlocks: Int { wholeBlocks.load(ordering: .relaxed) }

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
        var voicedStart = frames
        var voicedEnd = 0
        var index = 0
        for frame in 0..<frames {
            var peak: Float = 0
            for _ in 0..<channels {
                peak = max(peak, abs(samples[index]))
                index &+= 1
            }
            if peak >= threshold {
                voicedStart = min(voicedStart, frame)
                voicedEnd = frame &+ 1
            }
            below = peak >= threshold ? 0 : min(below &+ 1, Int.max / 2)
            if below <= hold {
                if start == nil { start = frame }
                end = frame &+ 1
            }
        }
        framesBelow = below
        if let speech = speech.load(ordering: .acquiring) {
            speech._withUnsafeGuaranteedRef { speech in
                guard speech.channels == channels else { return }
                speech.measure(
                    samples, frames: frames, voicedFrom: voicedStart, to: voicedEnd, loudnessBits: speechLoudnessBits,
                    recentBits: recentLoudnessBits, blocks: wholeBlocks)
            }
        }
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
