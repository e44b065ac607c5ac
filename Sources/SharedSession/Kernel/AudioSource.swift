/// Where a stream's audio comes from.
///
/// A source is pulled by the engine's render path, which on the PipeWire engine is a real-time
/// thread. Both engines call it the same way, so a file, a generator or a host-fed buffer plays
/// the same offline and on a sound server.
///
/// ## Implementation requirements
/// - ``render(into:frames:)`` runs on the render thread. It must not take a lock, allocate, log,
///   make a system call or call anything that might (see the project's real-time notes). Keep state
///   in `let` pointers and `Synchronization.Atomic` values; exchange data with other threads through
///   an ``AudioRingBuffer``.
/// - It is called by one render thread at a time; a source is attached to one stream.
/// - It writes interleaved frames in ``AudioFormat/standard`` and returns how many it wrote. The
///   engine fills the rest of the quantum with silence, so a source that ran dry or ended returns
///   fewer frames than asked rather than blocking.
/// - A source whose audio is made by another thread (a decoder) and can fall behind a host that
///   renders faster than real time implements ``waitUntilReady(frames:timeout:)``; every other
///   source keeps the default, which is always ready.
/// - A source that keeps a clock a picture follows (a media file) implements
///   ``render(into:frames:heardAt:)`` to learn when the listener hears what it renders; every other
///   source keeps the default, which ignores the instant.
public protocol AudioSource: AnyObject, Sendable {
    /// Writes up to `frames` interleaved stereo frames to `buffer` and returns the number written.
    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int

    /// Writes up to `frames` frames as ``render(into:frames:)`` does, told when the listener hears the
    /// first of them: `heardAt` is that instant on the monotonic clock, as the engine computes it from
    /// the route's latency (the PipeWire engine: the graph's and the device's delay and its own queue;
    /// the offline engine: its timeline, with no latency). `nil` when the engine cannot tell this call
    /// (it has no timing, or the sound server reported a latency it refused); the frames then follow
    /// the ones before without a gap.
    ///
    /// The engines call this one. The default implementation calls ``render(into:frames:)``.
    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int, heardAt: MonotonicInstant?) -> Int

    /// Blocks the calling thread until the next ``render(into:frames:)`` of `frames` frames can be
    /// served in full (or up to the source's end), or throws when `timeout` passes first.
    ///
    /// ``OfflineEngine`` calls it for every stream that will pull its source, before each render
    /// call, so an offline render is the same on every run whatever the decoder's speed. A real-time
    /// engine never calls it: it runs on a normal thread and may block.
    ///
    /// The default implementation returns at once: a buffer, a generator or a ring the host fills
    /// itself is as ready as it will ever be.
    ///
    /// - Throws: ``SessionError`` naming the source and what it is waiting for, when `timeout`
    ///   passes before it is ready.
    func waitUntilReady(frames: Int, timeout: Duration) throws(SessionError)
}

extension AudioSource {
    /// Ignores the instant: calls ``render(into:frames:)``.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int, heardAt: MonotonicInstant?) -> Int {
        render(into: buffer, frames: frames)
    }

    /// Always ready: returns at once.
    public func waitUntilReady(frames: Int, timeout: Duration) throws(SessionError) {}
}
