#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif

/// Where a ``MediaFileSource``'s decoder thread sleeps and the threads waiting on it are woken: one
/// pthread mutex and two condition variables on the monotonic clock.
///
/// - The decoder thread sleeps in ``sleep(nanoseconds:)`` until a control call ``wake()``s it (play,
///   pause, seek, looping, close, a host waiting for audio) or the time it computed runs out (the
///   ring drained to its low watermark at the stream's rate).
/// - Hosts waiting for audio (``MediaFileSource/waitUntilBuffered(timeout:)``, the offline engine's
///   readiness wait) sleep in ``wait(until:_:)`` until the decoder thread says it made progress.
///
/// The render side never comes here: it cannot take a lock or make a system call. The decoder wakes
/// for it by the clock instead.
///
/// A pthread mutex rather than `Synchronization.Mutex`: a condition variable needs one, and
/// ThreadSanitizer sees both.
final class DecoderWakeup: @unchecked Sendable {
    // @unchecked: `mutex`, `wakeCondition` and `progressCondition` are pthread objects made to be
    // shared, at stable addresses allocated once; `rung` is read and written only with `mutex` held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let wakeCondition: UnsafeMutablePointer<pthread_cond_t>
    private let progressCondition: UnsafeMutablePointer<pthread_cond_t>
    private var rung = false

    init() {
        mutex = .allocate(capacity: 1)
        wakeCondition = .allocate(capacity: 1)
        progressCondition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(wakeCondition, &attributes)
        pthread_cond_init(progressCondition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(progressCondition)
        pthread_cond_destroy(wakeCondition)
        pthread_mutex_destroy(mutex)
        progressCondition.deallocate()
        wakeCondition.deallocate()
        mutex.deallocate()
    }

    /// Wakes the decoder thread now, or makes its next ``sleep(nanoseconds:)`` return at once if it is
    /// not asleep yet (it rechecks everything it looked at before deciding to sleep).
    func wake() {
        pthread_mutex_lock(mutex)
        rung = true
        pthread_cond_signal(wakeCondition)
        pthread_mutex_unlock(mutex)
    }

    /// Decoder thread: sleeps until ``wake()`` or until `nanoseconds` pass (nil: no time limit).
    func sleep(nanoseconds: Int?) {
        pthread_mutex_lock(mutex)
        if !rung {
            if let nanoseconds {
                var deadline = Self.monotonicNow(plus: nanoseconds)
                _ = pthread_cond_timedwait(wakeCondition, mutex, &deadline)
            } else {
                pthread_cond_wait(wakeCondition, mutex)
            }
        }
        rung = false
        pthread_mutex_unlock(mutex)
    }

    /// Decoder thread: tells the waiting hosts to look again (audio was written, a seek's audio is
    /// buffered, the file ended).
    func announceProgress() {
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(progressCondition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until `condition` holds or the monotonic clock passes `deadline` (nanoseconds, as
    /// ``monotonicNow()``), and returns whether it holds. `condition` reads only what the decoder
    /// changes before it calls ``announceProgress()``, so no announcement is missed.
    func wait(until deadline: Int, _ condition: () -> Bool) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var limit = timespec(tv_sec: deadline / 1_000_000_000, tv_nsec: deadline % 1_000_000_000)
        while !condition() {
            if pthread_cond_timedwait(progressCondition, mutex, &limit) == ETIMEDOUT { return condition() }
        }
        return true
    }

    /// The monotonic clock in nanoseconds.
    static func monotonicNow() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000_000_000 + now.tv_nsec
    }

    private static func monotonicNow(plus nanoseconds: Int) -> timespec {
        let deadline = monotonicNow() + nanoseconds
        return timespec(tv_sec: deadline / 1_000_000_000, tv_nsec: deadline % 1_000_000_000)
    }
}
