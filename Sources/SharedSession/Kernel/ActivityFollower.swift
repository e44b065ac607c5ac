import Synchronization

/// The voice-activity duck of one stream, the stage of ``StreamRenderer`` that lowers the stream while
/// the meters it follows hear activity (a voice chat's far end, the microphone): it reads the spans
/// each meter marked active in the quantum, and moves how far the stream is into the duck over the
/// attack and the release (``VoiceActivityPolicy``).
///
/// Control side: ``set(gain:following:attack:release:format:)`` stores atomics and bumps a generation;
/// the render side picks them up once per render call (``pickUp()``) and then advances a ``Duck`` per
/// frame, never locking or allocating.
final class ActivityFollower: @unchecked Sendable {
    // @unchecked: the `var` properties are touched only by the render thread (see StreamRenderer); the
    // control side reaches them only through the atomics.

    /// Where the stream is in its duck, per frame: a value the renderer copies into its loop and back.
    struct Duck {
        /// How far into the duck: 0 not at all, 1 at the ducked gain; moves over the attack and release.
        var mix: Float = 0
        /// The ducked gain heard now: a new one (the host changed its volume during speech) is reached
        /// over the attack going down and the release going up, never stepped.
        var ducked: Float = 1
        var target: Float = 1
        var step: Float = 0
        var attackStep: Float = 1
        var releaseStep: Float = 1

        /// Moves one frame on, into the duck if `active`, out of it otherwise.
        @inline(__always)
        mutating func advance(active: Bool) {
            if ducked != target {
                ducked = ducked < target ? min(target, ducked + step) : max(target, ducked - step)
            }
            if active {
                if mix < 1 { mix = min(1, mix + attackStep) }
            } else if mix > 0 {
                mix = max(0, mix - releaseStep)
            }
        }
    }

    // Control side to render side: the meters as unretained pointers (kept alive by whoever set them),
    // the ducked gain and the ramp lengths.
    private let meterSlots = AtomicSlots(empty: 0)
    private let gainBits = Atomic<UInt32>(Float(1).bitPattern)
    private let attackFrameCount = Atomic<Int>(960)
    private let releaseFrameCount = Atomic<Int>(19_200)
    private let generation = Atomic<UInt64>(0)

    // Render side only: the meters followed and the last block read from each (a block read twice is
    // stale: its writer stopped), the active spans of this quantum, and the duck.
    private(set) var meters: (UInt, UInt, UInt, UInt) = (0, 0, 0, 0)
    private var meterBlocks: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var seenGeneration: UInt64 = 0
    private var spans: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    var duck = Duck()

    // MARK: Control side

    /// Follows `meters` (at most ``AtomicSlots/count``), ducking to `gain` while any hears activity.
    /// The render side holds the meters unretained: the caller keeps them alive while it may render.
    func set(gain: Float, following meters: [ActivityMeter], attack: Duration, release: Duration, format: AudioFormat) {
        meterSlots.store(
            meters.prefix(AtomicSlots.count).map { UInt64(UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque())) })
        // Unfollowed, the stream comes back from the ducked gain it had: only the duck's depth moves.
        if !meters.isEmpty { gainBits.store(gain.bitPattern, ordering: .relaxed) }
        attackFrameCount.store(max(1, format.frames(in: attack)), ordering: .relaxed)
        releaseFrameCount.store(max(1, format.frames(in: release)), ordering: .relaxed)
        generation.add(1, ordering: .releasing)
    }

    /// Whether any meter is followed (as last set).
    var isFollowing: Bool { meterSlots.isFirstSet }

    // MARK: Render side

    /// Picks up what ``set(gain:following:attack:release:format:)`` published, if it changed: returns
    /// the attack and release in frames then, `nil` otherwise.
    @inline(__always)
    func pickUp() -> (attackFrames: Float, releaseFrames: Float)? {
        let published = generation.load(ordering: .acquiring)
        guard published != seenGeneration else { return nil }
        seenGeneration = published
        let words = meterSlots.load()
        meters = (
            UInt(truncatingIfNeeded: words.0), UInt(truncatingIfNeeded: words.1), UInt(truncatingIfNeeded: words.2),
            UInt(truncatingIfNeeded: words.3)
        )
        let attackFrames = Float(attackFrameCount.load(ordering: .relaxed))
        let releaseFrames = Float(releaseFrameCount.load(ordering: .relaxed))
        duck.target = Float(bitPattern: gainBits.load(ordering: .relaxed))
        duck.attackStep = 1 / attackFrames
        duck.releaseStep = 1 / releaseFrames
        if duck.mix == 0 { duck.ducked = duck.target }
        duck.step = abs(duck.target - duck.ducked) / (duck.target < duck.ducked ? attackFrames : releaseFrames)
        return (attackFrames, releaseFrames)
    }

    /// Reads the spans the followed meters marked active for this quantum. Returns whether the duck
    /// moves in it: a meter is followed, or the stream is still coming out of the duck.
    @inline(__always)
    func readSpans() -> Bool {
        (spans.0, spans.1, meterBlocks.0) = Self.span(of: meters.0, after: meterBlocks.0)
        (spans.2, spans.3, meterBlocks.1) = Self.span(of: meters.1, after: meterBlocks.1)
        (spans.4, spans.5, meterBlocks.2) = Self.span(of: meters.2, after: meterBlocks.2)
        (spans.6, spans.7, meterBlocks.3) = Self.span(of: meters.3, after: meterBlocks.3)
        return meters.0 != 0 || duck.mix > 0
    }

    /// Whether any followed meter marked activity in this quantum.
    var isVoiced: Bool { spans.1 != 0 || spans.3 != 0 || spans.5 != 0 || spans.7 != 0 }

    /// Whether `frame` of this quantum lies in an active span of any followed meter.
    @inline(__always)
    func isActive(at frame: Int) -> Bool {
        (frame >= spans.0 && frame < spans.1) || (frame >= spans.2 && frame < spans.3)
            || (frame >= spans.4 && frame < spans.5) || (frame >= spans.6 && frame < spans.7)
    }

    @inline(__always)
    private static func span(of meter: UInt, after lastBlock: UInt64) -> (Int, Int, UInt64) {
        guard meter != 0, let pointer = UnsafeRawPointer(bitPattern: meter) else { return (0, 0, lastBlock) }
        let (start, end, block) = Unmanaged<ActivityMeter>.fromOpaque(pointer)._withUnsafeGuaranteedRef {
            $0.activeSpan()
        }
        // The same block as last time: its writer has not measured since (a closed or stopped
        // stream), so it says nothing about now.
        return block == lastBlock ? (0, 0, block) : (start, end, block)
    }
}
