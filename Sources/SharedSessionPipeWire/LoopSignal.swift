internal import CPipeWire
internal import CPipeWireShim
import SharedSession

/// Wakes the engine's loop (a write to the eventfd of its one event source), from any thread: the
/// adopted streams' commands, the engine's suspension.
final class LoopSignal: Sendable {
    /// The loop and its event source, as addresses: nil before the engine starts and after it stops.
    private let target = Locked<(loop: UInt, source: UInt)?>(nil)

    func attach(loop: UnsafeMutablePointer<pw_loop>, source: UnsafeMutablePointer<spa_source>?) {
        target.withLock { $0 = source.map { (UInt(bitPattern: loop), UInt(bitPattern: $0)) } }
    }

    func detach() {
        target.withLock { $0 = nil }
    }

    func signal() {
        target.withLock { target in
            guard let target, let loop = UnsafeMutablePointer<pw_loop>(bitPattern: target.loop),
                let source = UnsafeMutablePointer<spa_source>(bitPattern: target.source)
            else { return }
            // Under the mutex, so `detach()` (before the source is destroyed) cannot come between.
            _ = CPipeWireShim_loopSignalEvent(loop, source)
        }
    }
}
