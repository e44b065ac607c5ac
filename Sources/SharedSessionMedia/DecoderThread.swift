#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif

/// A joinable POSIX thread that runs one body: the decoder thread of a ``MediaFileSource``.
/// Its own thread (not a task or Dispatch's pool), so decoding never waits on the cooperative pool
/// and is never waited on by it.
final class DecoderThread: @unchecked Sendable {
    // @unchecked: `handle` is written once by start() before any other access and read only by
    // join(), which the owner calls once after start().
    private var handle = pthread_t()
    private var started = false

    /// Starts `body` on a new thread. False if the system has no thread to give.
    func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body: body))
        let result = pthread_create(
            &handle, nil,
            { raw in
                #if canImport(Darwin)
                    let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
                #else
                    let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                #endif
                box.body()
                return nil
            }, box.toOpaque())
        if result != 0 {
            box.release()
            return false
        }
        started = true
        return true
    }

    /// Waits for the body to return.
    func join() {
        if started {
            pthread_join(handle, nil)
            started = false
        }
    }
}

/// Sleeps the calling (non-real-time) thread for `nanoseconds`.
func sleepNanoseconds(_ nanoseconds: Int) {
    var request = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
}
