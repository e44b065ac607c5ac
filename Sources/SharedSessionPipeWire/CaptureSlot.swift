import SharedSession

/// One capture the engine keeps while it is asked for, across reconnections: the voice input (the
/// default source) or the monitor of a sink, copied into the caller's ring. Its node is made when the
/// engine is connected, dropped when the connection goes, made again on reconnection, and made again
/// when it never starts (as every node of the engine is). Loop thread (or the loop lock held) only.
final class CaptureSlot {
    /// What the slot captures.
    enum Purpose: Sendable, Hashable {
        /// The default source, for the voice configuration's input.
        case voice
        /// What a sink plays (its monitor): for tests and benchmarks that measure what was played.
        case sinkMonitor
    }

    let purpose: Purpose
    private let factory: NodeFactory
    /// The ring being filled, while the capture is on.
    private(set) var ring: AudioRingBuffer?
    /// The sink whose monitor is recorded (nil: the default sink); for the voice, the echo canceller's
    /// source while it cancels (nil: the default source).
    private var target: String?
    /// The capture's node, while connected.
    private(set) var node: PipeWireStream?

    init(_ purpose: Purpose, factory: NodeFactory) {
        self.purpose = purpose
        self.factory = factory
    }

    /// Starts capturing into `ring` (replacing any capture of this slot), at once if `core` is
    /// connected, else on the next connection. Throws, capturing nothing, if the node cannot be made.
    func start(
        into ring: AudioRingBuffer, target: String? = nil, core: OpaquePointer?,
        observer: any StreamObserver
    ) throws(SessionError) {
        node?.destroy()
        node = nil
        self.ring = ring
        self.target = target
        guard let core else { return }
        do {
            node = try factory.capture(
                core: core, purpose: purpose, ring: ring, target: target, observer: observer)
        } catch {
            self.ring = nil
            throw error
        }
    }

    /// Stops capturing and destroys the node.
    func stop() {
        dropNode()
        ring = nil
        target = nil
    }

    /// Destroys the node (the connection went away); the capture stays on for the next connection.
    func dropNode() {
        node?.destroy()
        node = nil
    }

    /// Makes the node on a new connection, if the capture is on. A failure leaves it without a node,
    /// as the connection's other nodes that cannot be made.
    func reopen(core: OpaquePointer, observer: any StreamObserver) {
        guard let ring else { return }
        node = try? factory.capture(
            core: core, purpose: purpose, ring: ring, target: target, observer: observer)
    }

    /// Makes the node again if it has not started in time (``StreamHealth/shouldRelink(at:)``). A capture
    /// has no stream id to report a fault for, so a never-started deadline only ends its wait.
    func housekeeping(at now: ContinuousClock.Instant, core: OpaquePointer, observer: any StreamObserver) {
        guard let old = node, let ring else { return }
        _ = old.health.check(at: now)
        guard old.health.shouldRelink(at: now) else { return }
        old.destroy()
        node = try? factory.capture(
            core: core, purpose: purpose, ring: ring, target: target, observer: observer)
        node?.health = old.health.relinked(at: now)
    }
}
