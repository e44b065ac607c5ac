internal import CPipeWire
internal import CPipeWireShim
import SharedSession

/// One `pw_thread_loop` with its `pw_context`, and the state that lives on it.
///
/// PipeWire's rule (thread-loop.h): the loop's lock must be held for every call on an object of
/// the loop, and the loop's events arrive with it held. ``withLock(_:)`` is the one door for code
/// outside the loop thread; PipeWire's callbacks are the other, and run with the lock already held.
///
/// The context loads the real-time module, so the data thread that runs process callbacks asks for
/// real-time scheduling: PipeWire 0.3's `client.conf` has no such module and is replaced by
/// `config.name = client-rt.conf`; 1.x's `client.conf` loads it, and 1.x logs `client-rt.conf` as
/// deprecated, so there the default configuration is kept.
final class ThreadLoop<State: AnyObject>: @unchecked Sendable {
    // @unchecked: `state` is not Sendable. It is touched only in `withLock` (the loop's recursive
    // mutex held) or by callbacks that PipeWire runs on the loop thread with that mutex held, so no
    // two threads reach it at once. The pointers are written once in init and freed in `stop()`
    // after the loop thread has ended.

    private let threadLoop: OpaquePointer
    /// The `pw_loop` the thread runs; timers and sources are added to it.
    let loop: UnsafeMutablePointer<pw_loop>
    /// The client context; every connection of the engine is made from it.
    let context: OpaquePointer
    private let state: State
    private var stopped = false

    /// Creates the loop and the context, then the state (given both), then starts the loop thread.
    init(name: String, makeState: (_ loop: UnsafeMutablePointer<pw_loop>, _ context: OpaquePointer) -> State)
        throws(SessionError)
    {
        pipeWireInitialized
        guard let threadLoop = pw_thread_loop_new(name, nil) else {
            throw .pipeWire(.engineUnavailable, "pw_thread_loop_new failed", result: -Int32(errno))
        }
        let loop = pw_thread_loop_get_loop(threadLoop)!
        let properties = CPipeWireShim_propertiesNew()
        if Self.libraryMajorVersion < 1 { pw_properties_set(properties, PW_KEY_CONFIG_NAME, "client-rt.conf") }
        guard let context = pw_context_new(loop, properties, 0) else {
            let result = -Int32(errno)
            pw_thread_loop_destroy(threadLoop)
            throw .pipeWire(.engineUnavailable, "pw_context_new failed", result: result)
        }
        self.threadLoop = threadLoop
        self.loop = loop
        self.context = context
        self.state = makeState(loop, context)
        let started = pw_thread_loop_start(threadLoop)
        guard started >= 0 else {
            stopped = true
            pw_context_destroy(context)
            throw .pipeWire(.engineUnavailable, "pw_thread_loop_start failed", result: started)
        }
    }

    /// The major version of the libpipewire the process loaded (not the one it was built against).
    static var libraryMajorVersion: Int {
        String(cString: pw_get_library_version()).split(separator: ".").first.flatMap { Int($0) } ?? 0
    }

    deinit {
        if !stopped {
            pw_thread_loop_stop(threadLoop)
            destroyContext()
        }
        pw_thread_loop_destroy(threadLoop)
    }

    /// Runs `body` with the loop's lock held. The lock is recursive, so a callback that already
    /// holds it may call this too. Keep `body` short: the loop thread waits for it.
    func withLock<Result, Failure: Error>(_ body: (State) throws(Failure) -> Result) throws(Failure) -> Result {
        pw_thread_loop_lock(threadLoop)
        defer { pw_thread_loop_unlock(threadLoop) }
        return try body(state)
    }

    /// Runs `teardown` under the lock, stops the loop thread and frees the context. The loop itself
    /// (its lock) lives until deinit, so a ``withLock(_:)`` after this still works: the loop thread is
    /// gone, and the state must know it was torn down. Must not be called on the loop thread. Later
    /// calls do nothing.
    func stop(_ teardown: (State) -> Void) {
        pw_thread_loop_lock(threadLoop)
        if stopped {
            pw_thread_loop_unlock(threadLoop)
            return
        }
        stopped = true
        teardown(state)
        pw_thread_loop_unlock(threadLoop)
        pw_thread_loop_stop(threadLoop)
        destroyContext()
    }

    /// Frees the context once the loop thread has ended, with the lock held all the same: PipeWire 1.x
    /// checks that calls on the loop's objects come from its thread or hold its lock, and says "called
    /// from wrong context" otherwise.
    private func destroyContext() {
        pw_thread_loop_lock(threadLoop)
        pw_context_destroy(context)
        pw_thread_loop_unlock(threadLoop)
    }

    /// Whether ``stop(_:)`` ran.
    var isStopped: Bool { withLock { _ in stopped } }
}

/// pw_init, once per process, before the first loop.
private let pipeWireInitialized: Void = pw_init(nil, nil)

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif
