import Synchronization

/// The exactly-once release both lease kinds share: the first `release()` or the deinit gives the
/// lease back; a later `release()` is reported as ignored.
///
/// A flag stored inline in the lease (not an object of its own with closures), so making a lease
/// allocates only the lease.
struct ReleaseGate: ~Copyable, Sendable {
    private let released: Atomic<Bool>

    init(released: Bool = false) {
        self.released = Atomic(released)
    }

    var isOpen: Bool { !released.load(ordering: .acquiring) }

    /// Closes the gate: `true` the first time (the caller gives the lease back), `false` after that
    /// (a repeated release, or a drop after a release).
    func close() -> Bool {
        !released.exchange(true, ordering: .acquiringAndReleasing)
    }
}
