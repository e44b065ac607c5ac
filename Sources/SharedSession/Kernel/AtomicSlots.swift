import Synchronization

/// Four words the control side publishes and the render side reads as one set: the per-followed-meter
/// values of a stream's ducks (the meters followed, each one's loudness slot). The render side reads
/// them after an acquiring load of the owner's generation counter, which the control side bumps after
/// storing them (releasing), so it never sees half of a set.
struct AtomicSlots: ~Copyable {
    /// How many slots there are: ``StreamRenderer/maximumFollowed``.
    static let count = 4

    private let slots: InlineArray<4, Atomic<UInt64>>
    private let empty: UInt64

    /// Four slots holding `empty`.
    init(empty: UInt64) {
        self.empty = empty
        slots = InlineArray { _ in Atomic(empty) }
    }

    /// Stores `values` in order, the slots past them emptied; values past the fourth are not kept.
    /// Control side: it may allocate.
    func store(_ values: [UInt64]) {
        for index in 0..<Self.count {
            slots[index].store(index < values.count ? values[index] : empty, ordering: .relaxed)
        }
    }

    /// The four words. Render side: no lock, no allocation.
    @inline(__always)
    func load() -> (UInt64, UInt64, UInt64, UInt64) {
        (
            slots[0].load(ordering: .relaxed), slots[1].load(ordering: .relaxed), slots[2].load(ordering: .relaxed),
            slots[3].load(ordering: .relaxed)
        )
    }

    /// Whether the first slot holds something other than the empty word.
    var isFirstSet: Bool { slots[0].load(ordering: .relaxed) != empty }
}
