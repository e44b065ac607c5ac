import Synchronization

/// Where the media time jumps or stops in the ring's frame sequence: a lock-free single-producer,
/// single-consumer queue from the decoder thread to the render side, ffplay's serials in our terms.
///
/// A marker says "at the frame with ring index `index` (counted from the first frame ever written)
/// a segment starts (a seek's audio, or the file again after a loop) playing media frame
/// `mediaFrame`, or the file ends". `serial` is the seek the decoder had taken up when it pushed
/// the marker: the render side plays only the segments of the latest seek and drops the frames and
/// markers of older ones by comparing serials, so a seek needs no other coordination. The producer
/// publishes a marker before it writes the frame at its index, so a render side that sees a frame
/// also sees the marker before it.
final class SegmentQueue: @unchecked Sendable {
    // @unchecked: the slots are raw memory. The producer writes slot `tail & mask` only while it is
    // free (tail - head < capacity, head loaded acquiring) and publishes it with a releasing store of
    // tail; the consumer reads slots in [head, tail) after an acquiring load of tail and frees them
    // with a releasing store of head. No slot is touched by both sides at once.

    struct Marker: Equatable {
        enum Kind: Int {
            /// A seek's audio starts here, at `mediaFrame`; everything before it is stale.
            case start
            /// The file starts again here (looping), at `mediaFrame` 0.
            case loop
            /// The file ends here: no frame of this serial follows, unless a loop marker at the same
            /// index says the decoder took the end back (looping was switched on in time).
            case end
            /// The audio does not follow on from the frame before (a gap filled with silence, a
            /// damaged frame dropped): the render side fades here as it does at a seek.
            case discontinuity
        }

        var kind: Kind
        var index: Int
        var mediaFrame: Int
        var serial: Int
    }

    let capacity = 64
    private let mask = 63
    private let kinds: UnsafeMutablePointer<Int>
    private let indices: UnsafeMutablePointer<Int>
    private let mediaFrames: UnsafeMutablePointer<Int>
    private let serials: UnsafeMutablePointer<Int>
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)

    init() {
        kinds = .allocate(capacity: 64)
        indices = .allocate(capacity: 64)
        mediaFrames = .allocate(capacity: 64)
        serials = .allocate(capacity: 64)
        kinds.initialize(repeating: 0, count: 64)
        indices.initialize(repeating: 0, count: 64)
        mediaFrames.initialize(repeating: 0, count: 64)
        serials.initialize(repeating: 0, count: 64)
    }

    deinit {
        kinds.deallocate()
        indices.deallocate()
        mediaFrames.deallocate()
        serials.deallocate()
    }

    /// Producer: appends `marker`; false when the queue is full (try again after the consumer moved on).
    func push(_ marker: Marker) -> Bool {
        let end = tail.load(ordering: .relaxed)
        guard end &- head.load(ordering: .acquiring) < capacity else { return false }
        let slot = end & mask
        kinds[slot] = marker.kind.rawValue
        indices[slot] = marker.index
        mediaFrames[slot] = marker.mediaFrame
        serials[slot] = marker.serial
        tail.store(end &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer: the oldest marker, if any, without removing it.
    @inline(__always)
    func peek() -> Marker? {
        peek(at: 0)
    }

    /// Consumer: the marker `offset` places after the oldest, if there is one.
    @inline(__always)
    func peek(at offset: Int) -> Marker? {
        let start = head.load(ordering: .relaxed)
        guard offset < tail.load(ordering: .acquiring) &- start else { return nil }
        let slot = (start &+ offset) & mask
        return Marker(
            kind: Marker.Kind(rawValue: kinds[slot]) ?? .end, index: indices[slot], mediaFrame: mediaFrames[slot],
            serial: serials[slot])
    }

    /// Consumer: removes the oldest marker.
    @inline(__always)
    func pop() {
        head.store(head.load(ordering: .relaxed) &+ 1, ordering: .releasing)
    }
}
