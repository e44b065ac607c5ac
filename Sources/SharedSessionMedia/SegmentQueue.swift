import Synchronization

/// Where the media time jumps in the ring's frame sequence: a lock-free single-producer,
/// single-consumer queue from the decoder thread to the render side.
///
/// A marker says "the frame with ring index `index` (counted from the first frame ever written)
/// plays media frame `mediaFrame`", where a loop starts the file again. `generation` is the seek the
/// decoder had handled when it pushed the marker, so the render side drops markers that a later seek
/// made stale. The producer publishes a marker before it writes the marker's first frame, so a render
/// side that sees a frame also sees its marker.
final class SegmentQueue: @unchecked Sendable {
    // @unchecked: the slots are raw memory. The producer writes slot `tail & mask` only while it is
    // free (tail - head < capacity, head loaded acquiring) and publishes it with a releasing store of
    // tail; the consumer reads slots in [head, tail) after an acquiring load of tail and frees them
    // with a releasing store of head. No slot is touched by both sides at once.

    struct Marker {
        var index: Int
        var mediaFrame: Int
        var generation: Int
    }

    let capacity = 64
    private let mask = 63
    private let indices: UnsafeMutablePointer<Int>
    private let mediaFrames: UnsafeMutablePointer<Int>
    private let generations: UnsafeMutablePointer<Int>
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)

    init() {
        indices = .allocate(capacity: 64)
        mediaFrames = .allocate(capacity: 64)
        generations = .allocate(capacity: 64)
        indices.initialize(repeating: 0, count: 64)
        mediaFrames.initialize(repeating: 0, count: 64)
        generations.initialize(repeating: 0, count: 64)
    }

    deinit {
        indices.deallocate()
        mediaFrames.deallocate()
        generations.deallocate()
    }

    /// Producer: appends `marker`; false when the queue is full (try again after the consumer moved on).
    func push(_ marker: Marker) -> Bool {
        let end = tail.load(ordering: .relaxed)
        guard end &- head.load(ordering: .acquiring) < capacity else { return false }
        let slot = end & mask
        indices[slot] = marker.index
        mediaFrames[slot] = marker.mediaFrame
        generations[slot] = marker.generation
        tail.store(end &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer: the oldest marker, if any, without removing it.
    @inline(__always)
    func peek() -> Marker? {
        let start = head.load(ordering: .relaxed)
        guard start != tail.load(ordering: .acquiring) else { return nil }
        let slot = start & mask
        return Marker(index: indices[slot], mediaFrame: mediaFrames[slot], generation: generations[slot])
    }

    /// Consumer: removes the oldest marker.
    @inline(__always)
    func pop() {
        head.store(head.load(ordering: .relaxed) &+ 1, ordering: .releasing)
    }
}
