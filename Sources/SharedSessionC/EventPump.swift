import Dispatch
import Foundation
import SharedSession
import SharedSessionCoding
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The host's event callback as C gave it. The context is the host's pointer, passed back untouched;
/// the library never reads it, so handing it to the pump's thread is the host's promise, not a race.
struct EventCallback: @unchecked Sendable {
    let function: @convention(c) (UInt64, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void
    let context: UnsafeMutableRawPointer?
}

/// Delivers a session's events to the host's callback on one thread of its own, in order, one at a
/// time, with no lock of the library held: the callback may call any function of the library, the
/// session's release included. The session's delegate only queues (it runs on whichever thread made
/// the change, which must not wait for the host).
final class EventPump: SharedSessionDelegate, Sendable {
    private struct Queue {
        var lines: [String] = []
        var callback: EventCallback?
        var stopping = false
    }

    /// The session's handle, passed to the callback: set once the table has filed the session.
    let handle = Atomic<UInt64>(0)
    private let queue = Locked(Queue())
    private let wakeup = DispatchSemaphore(value: 0)
    private let thread = Locked<pthread_t?>(nil)
    private static let encoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    init() throws(CallError) {
        let unmanaged = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { argument in
                let pump = Unmanaged<EventPump>.fromOpaque(argument!).takeRetainedValue()
                pump.run()
                return nil
            }, unmanaged.toOpaque())
        guard started == 0 else {
            unmanaged.release()
            throw CallError(status: .sessionError, message: "no event thread could be started: errno \(started)")
        }
        self.thread.withLock { $0 = thread }
    }

    func setCallback(_ callback: EventCallback?) {
        queue.withLock { $0.callback = callback }
    }

    func session(_ session: SharedSession, didEmit event: SessionEvent) {
        let line = (try? Self.encoder.encode(event)).map { String(decoding: $0, as: UTF8.self) } ?? "\(event)"
        queue.withLock { $0.lines.append(line) }
        wakeup.signal()
    }

    /// Delivers what is queued, then ends the thread; waits for it unless called from it (a callback
    /// that releases its own session).
    func stop() {
        queue.withLock { $0.stopping = true }
        wakeup.signal()
        guard let thread = thread.withLock({ $0.take() }) else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    private func run() {
        while true {
            wakeup.wait()
            let (lines, callback, stopping) = queue.withLock { queue in
                defer { queue.lines.removeAll() }
                return (queue.lines, queue.callback, queue.stopping)
            }
            if let callback {
                for line in lines {
                    line.withCString { callback.function(handle.load(ordering: .relaxed), $0, callback.context) }
                }
            }
            if stopping { return }
        }
    }
}
