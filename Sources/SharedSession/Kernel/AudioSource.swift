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
public protocol AudioSource: AnyObject, Sendable {
    /// Writes up to `frames` interleaved stereo frames to `buffer` and returns the number written.
    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int
}
