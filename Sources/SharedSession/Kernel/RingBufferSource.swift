/// Plays frames that the host pushes from its own thread (a decoder, a network jitter buffer).
///
/// The host writes to ``ring`` at its own pace; the render path reads what is there and plays
/// silence for the rest of a quantum when the host falls behind.
public final class RingBufferSource: AudioSource {
    /// The ring the host writes to. Write from one thread at a time.
    public let ring: AudioRingBuffer

    /// Creates a source over a new ring of at least `capacity` frames.
    public init(capacity: Int = 16_384) throws(SessionError) {
        self.ring = try AudioRingBuffer(minimumCapacity: capacity)
    }

    /// Creates a source over an existing ring.
    public init(ring: AudioRingBuffer) {
        self.ring = ring
    }

    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        ring.read(into: buffer, frames: frames)
    }
}
