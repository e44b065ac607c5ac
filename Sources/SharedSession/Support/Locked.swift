import Synchronization

#if SHAREDSESSION_TSAN
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif
#endif

/// A value that one thread at a time may touch: the lock of every SharedSession type.
///
/// It is `Synchronization.Mutex`. Only in the ThreadSanitizer build (`-Xswiftc -DSHAREDSESSION_TSAN`,
/// as `Scripts/test` runs it) is it a pthread mutex instead: TSan intercepts pthread locks, but not
/// the raw futex `Mutex` waits on under Linux, so with `Mutex` it reports every access made under the
/// lock as a race. That build checks our own accesses under the lock TSan understands.
package struct Locked<Value>: ~Copyable, Sendable {
    #if SHAREDSESSION_TSAN
        private let box: Box
        private let lock: PthreadMutex
    #else
        private let mutex: Mutex<Value>
    #endif

    package init(_ value: sending Value) {
        #if SHAREDSESSION_TSAN
            box = Box(value)
            lock = PthreadMutex()
        #else
            mutex = Mutex(value)
        #endif
    }

    package borrowing func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        LockedProbe.noteAcquisition()
        #if SHAREDSESSION_TSAN
            pthread_mutex_lock(lock.raw)
            defer { pthread_mutex_unlock(lock.raw) }
            return try body(&box.value)
        #else
            return try mutex.withLock(body)
        #endif
    }
}

/// The real-time probe's view of ``Locked``: an uncontended `Mutex` is one inlined compare-exchange
/// that no interposed library call can see, so every acquisition calls this hook when one is set.
/// Tests set it to `CRealtimeProbe_noteLock` (Tests/CRealtimeProbe), which counts the acquisition on
/// an armed or watched thread; unset (everywhere else) it costs one relaxed atomic load.
package enum LockedProbe {
    /// The hook's address (0: none).
    private static let hook = Atomic<UInt>(0)

    /// Sets (or with nil removes) the function every acquisition calls.
    package static func setHook(_ function: (@convention(c) () -> Void)?) {
        hook.store(function.map { UInt(bitPattern: unsafeBitCast($0, to: Int.self)) } ?? 0, ordering: .relaxed)
    }

    @inline(__always)
    static func noteAcquisition() {
        let address = hook.load(ordering: .relaxed)
        if address != 0 {
            unsafeBitCast(Int(bitPattern: address), to: (@convention(c) () -> Void).self)()
        }
    }
}

#if SHAREDSESSION_TSAN
    extension Locked {
        private final class Box: @unchecked Sendable {
            // @unchecked: `value` is read and written only while the Locked's pthread mutex is held, in
            // withLock.
            var value: Value

            init(_ value: Value) { self.value = value }
        }
    }

    /// The pthread mutex of the ThreadSanitizer build; a separate object from the value it guards, so
    /// reading it to lock is not an access to the guarded storage.
    private final class PthreadMutex: @unchecked Sendable {
        // @unchecked: `raw` never changes after init, and a pthread mutex is made to be shared.
        let raw: UnsafeMutablePointer<pthread_mutex_t>

        init() {
            raw = .allocate(capacity: 1)
            pthread_mutex_init(raw, nil)
        }

        deinit {
            pthread_mutex_destroy(raw)
            raw.deallocate()
        }
    }
#endif
