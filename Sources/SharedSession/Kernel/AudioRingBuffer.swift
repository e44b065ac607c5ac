import Synchronization

/// A lock-free single-producer, single-consumer ring of interleaved frames.
///
/// The one way audio crosses between a normal thread and a render thread: a host decoder writes
/// frames that a stream's render path reads (``RingBufferSource``), and the voice capture stream
/// writes frames that a voice-chat client reads. Neither side ever waits, locks or allocates.
///
/// One thread may write and one thread may read at a time; that discipline is the caller's.
public final class AudioRingBuffer: @unchecked Sendable {
    // @unchecked: `storage` is a raw pointer, which Swift cannot see as Sendable. It is safe because
    // the producer only writes frames in [writeIndex, readIndex + capacity) and publishes them with a
    // releasing store of writeIndex; the consumer only reads frames in [readIndex, writeIndex) after an
    // acquiring load, and frees them with a releasing store of readIndex. No frame is touched by both.

    /// Interleaved channels per frame.
    public let channels: Int
    /// Frames the ring holds.
    public let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Float>
    private let writeIndex = Atomic<Int>(0)
    private let readIndex = Atomic<Int>(0)

    /// Hears the activity of what the producer writes, when the ring was made with
    /// `measuringActivity` (the session's voice input is, for ducks that follow the microphone).
    public let activity: ActivityMeter?

    /// Creates a ring of at least `minimumCapacity` frames (rounded up to a power of two). With
    /// `measuringActivity`, every write is also measured by ``activity`` on the producer's thread.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` if the capacity is not 1 through 2^24 frames.
    public init(
        minimumCapacity: Int, channels: Int = AudioFormat.standard.channels, measuringActivity: Bool = false
    ) throws(SessionError) {
        guard minimumCapacity >= 1, minimumCapacity <= 1 << 24 else {
            throw .invalidValue(
                "ring capacity", Double(minimumCapacity), fix: "ask for 1 through 16777216 frames")
        }
        guard channels >= 1, channels <= 8 else {
            throw .invalidValue("channel count", Double(channels), fix: "use 1 through 8 channels")
        }
        var size = 1
        while size < minimumCapacity { size <<= 1 }
        self.capacity = size
        self.mask = size - 1
        self.channels = channels
        self.storage = .allocate(capacity: size * channels)
        self.storage.initialize(repeating: 0, count: size * channels)
        self.activity = measuringActivity ? ActivityMeter() : nil
    }

    deinit {
        storage.deallocate()
    }

    /// Frames written and not yet read.
    public var availableToRead: Int {
        writeIndex.load(ordering: .acquiring) &- readIndex.load(ordering: .acquiring)
    }

    /// Frames that can be written before the ring is full.
    public var availableToWrite: Int { capacity &- availableToRead }

    /// Producer side: copies as many whole frames of `samples` as fit and returns the frame count.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Float>) -> Int {
        guard let base = samples.baseAddress else { return 0 }
        activity?.measure(base, frames: samples.count / channels, channels: channels)
        let write = writeIndex.load(ordering: .relaxed)
        let read = readIndex.load(ordering: .acquiring)
        let frames = min(samples.count / channels, capacity &- (write &- read))
        copy(frames: frames, ringStart: write) { ring, offset, count in
            (ring).update(from: base + offset * channels, count: count * channels)
        }
        writeIndex.store(write &+ frames, ordering: .releasing)
        return frames
    }

    /// Producer side: copies as many whole frames of `samples` as fit and returns the frame count.
    @discardableResult
    public func write(_ samples: [Float]) -> Int {
        samples.withUnsafeBufferPointer { write($0) }
    }

    /// Consumer side: copies up to `frames` frames into `buffer` and returns how many it copied.
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let read = readIndex.load(ordering: .relaxed)
        let write = writeIndex.load(ordering: .acquiring)
        let count = min(frames, write &- read)
        copy(frames: count, ringStart: read) { ring, offset, chunk in
            (buffer + offset * channels).update(from: ring, count: chunk * channels)
        }
        readIndex.store(read &+ count, ordering: .releasing)
        return count
    }

    /// Consumer side: reads everything available into a new array. Not for a render thread.
    public func readAll() -> [Float] {
        let frames = availableToRead
        return [Float](unsafeUninitializedCapacity: frames * channels) { buffer, initialized in
            initialized = read(into: buffer.baseAddress!, frames: frames) * channels
        }
    }

    /// Calls `body` once or twice with the ring's storage for `frames` frames from `ringStart`,
    /// split where the ring wraps; `offset` counts frames from the start of the caller's buffer.
    @inline(__always)
    private func copy(
        frames: Int, ringStart: Int, _ body: (UnsafeMutablePointer<Float>, _ offset: Int, _ count: Int) -> Void
    ) {
        guard frames > 0 else { return }
        let start = ringStart & mask
        let first = min(frames, capacity &- start)
        body(storage + start * channels, 0, first)
        if first < frames {
            body(storage, first, frames &- first)
        }
    }
}
