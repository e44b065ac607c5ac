import NIOCore
import NIOPosix
import SharedSession

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one unit's session calls one at a time, in the order the unit sent them, on the server's thread
/// pool: off the event loop, because a session call may wait for the engine (the PipeWire engine's loop
/// lock), and the loop must stay free to hear of every other unit's death. Each job gets the
/// connection's `UnitBook`, which only jobs touch.
///
/// NIO's `NIOThreadPool` runs work items in parallel; this is the serial queue over it: jobs wait in
/// order, and at most one pool work item drains them at a time.
final class ConnectionExecutor: Sendable {
    typealias Job = @Sendable (inout UnitBook) -> Void

    /// The jobs one work item runs before it lets the pool's other work items go first: a unit that
    /// sends as fast as it can does not keep a pool thread from the other units.
    static let batch = 16

    private struct Queue {
        var jobs = CircularBuffer<Job>()
        /// Whether a work item is scheduled or running: it takes every job queued meanwhile.
        var draining = false
    }

    private let pool: NIOThreadPool
    private let queue = Locked(Queue())
    /// Held for each whole job, so it is never contended: jobs run one at a time. It is here for the
    /// compiler's sake, which cannot see that they do.
    private let book: Locked<UnitBook>

    init(pool: NIOThreadPool, book: UnitBook) {
        self.pool = pool
        self.book = Locked(book)
    }

    /// Queues `job` after every job queued before it.
    func submit(_ job: @escaping Job) {
        let start = queue.withLock { queue in
            queue.jobs.append(job)
            defer { queue.draining = true }
            return !queue.draining
        }
        if start { schedule() }
    }

    private func schedule() {
        // A pool shutting down hands the work item `.cancelled` (on another thread, or this one): it
        // drains all the same, as the jobs give back what a unit held. The server shuts its pool down
        // only once every connection's releases ran, so that is a last resort.
        pool.submit { [self] _ in drain() }
    }

    private func drain() {
        // Like the event loop, the threads that give a dead unit's duck back ask for nice -11 (as
        // PipeWire's own main loop does): on a loaded machine a thread of normal priority can wait a
        // whole render quantum to be scheduled. Without the privilege it stays as it was. (On Linux the
        // nice value is per thread: `who` 0 is the calling thread.)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -11)
        for _ in 0..<Self.batch {
            guard let job = next() else { return }
            book.withLock { job(&$0) }
        }
        let more = queue.withLock { queue in
            queue.draining = !queue.jobs.isEmpty
            return queue.draining
        }
        if more { schedule() }
    }

    /// The next job, or `nil` (and no work item draining any more) when there is none.
    private func next() -> Job? {
        queue.withLock { queue in
            guard let job = queue.jobs.popFirst() else {
                queue.draining = false
                return nil
            }
            return job
        }
    }
}
