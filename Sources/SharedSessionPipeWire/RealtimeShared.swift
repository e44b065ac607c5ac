import Synchronization

/// What the data thread and the control side share for the whole engine: atomics only, so the
/// process callbacks never lock.
final class RealtimeShared: Sendable {
    /// Set by ``PipeWireEngine/setSuspended(_:)``; every playback stream renders silence while set.
    let suspended = Atomic<Bool>(false)
    /// Frames of the most recent playback cycle.
    let quantum = Atomic<Int>(0)
    /// Frames of the most recent capture cycle (per channel).
    let captureQuantum = Atomic<Int>(0)
    /// The data thread's `pthread_t`, recorded by the first process callback; 0 before it.
    let dataThread = Atomic<UInt>(0)
    /// Process callbacks run so far, over all streams.
    let cycles = Atomic<Int>(0)

    /// Called by a process callback: records the cycle. Atomics only.
    @inline(__always)
    func noteCycle(frames: Int, thread: UInt) {
        quantum.store(frames, ordering: .relaxed)
        if dataThread.load(ordering: .relaxed) == 0 {
            dataThread.store(thread, ordering: .relaxed)
        }
        cycles.add(1, ordering: .relaxed)
    }
}
