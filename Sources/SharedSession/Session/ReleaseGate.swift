import Synchronization

/// The exactly-once release both lease kinds share: the first `release()` or the deinit gives the
/// lease back; a later `release()` is reported as ignored.
final class ReleaseGate: Sendable {
    private let released: Atomic<Bool>
    private let onRelease: @Sendable (_ dropped: Bool) -> Void
    private let onRepeat: @Sendable () -> Void

    init(
        released: Bool = false, release: @escaping @Sendable (_ dropped: Bool) -> Void,
        repeated: @escaping @Sendable () -> Void
    ) {
        self.released = Atomic(released)
        self.onRelease = release
        self.onRepeat = repeated
    }

    var isOpen: Bool { !released.load(ordering: .acquiring) }

    func release() {
        if released.exchange(true, ordering: .acquiringAndReleasing) {
            onRepeat()
        } else {
            onRelease(false)
        }
    }

    /// The lease's owner let go of it without releasing.
    func drop() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { onRelease(true) }
    }
}
