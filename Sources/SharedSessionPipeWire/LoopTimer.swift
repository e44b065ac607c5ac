internal import CPipeWire
internal import CPipeWireShim

/// A one-shot timer on the PipeWire loop, armed for an instant: the loop thread sleeps until then, or
/// for good when it is disarmed. Loop thread (or the loop lock held) only.
final class LoopTimer {
    private let loop: UnsafeMutablePointer<pw_loop>
    private var source: UnsafeMutablePointer<spa_source>?
    private let fire: () -> Void
    /// The instant it is armed for; nil while disarmed.
    private(set) var armedFor: ContinuousClock.Instant?

    /// Adds the timer to `loop`, disarmed; `fire` runs on the loop thread when it expires.
    init(loop: UnsafeMutablePointer<pw_loop>, fire: @escaping () -> Void) {
        self.loop = loop
        self.fire = fire
        source = CPipeWireShim_loopAddTimer(
            loop,
            { data, _ in
                guard let data else { return }
                let timer = Unmanaged<LoopTimer>.fromOpaque(data).takeUnretainedValue()
                timer.armedFor = nil
                timer.fire()
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Arms the timer for `instant` (at once if it has passed), or disarms it with nil. Re-arming for
    /// the instant it is already armed for costs nothing.
    func arm(for instant: ContinuousClock.Instant?) {
        guard let source, instant != armedFor else { return }
        armedFor = instant
        guard let instant else {
            _ = CPipeWireShim_loopUpdateTimer(loop, source, 0, 0)
            return
        }
        let delay = max(instant - .now, .nanoseconds(1))  // 0 would disarm it
        _ = CPipeWireShim_loopUpdateTimer(loop, source, UInt64(max(delay.inNanoseconds, 1)), 0)
    }

    /// Removes the timer from the loop; it never fires again.
    func destroy() {
        guard let source else { return }
        CPipeWireShim_loopDestroySource(loop, source)
        self.source = nil
        armedFor = nil
    }
}
