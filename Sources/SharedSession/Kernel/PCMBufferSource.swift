import Synchronization

/// Plays interleaved stereo samples held in memory, once or in a loop.
public final class PCMBufferSource: AudioSource {
    /// The interleaved samples.
    public let samples: [Float]
    /// Whether playback wraps to the start at the end.
    public let loops: Bool
    private let channels: Int
    private let frameCount: Int
    private let position = Atomic<Int>(0)

    /// Creates a source over interleaved samples.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` if the sample count is not a whole number
    ///   of frames, or a sample is NaN or infinite.
    public init(samples: [Float], loops: Bool = false, format: AudioFormat = .standard) throws(SessionError) {
        guard samples.count % format.channels == 0 else {
            throw .invalidValue(
                "sample count", Double(samples.count),
                fix: "pass whole interleaved frames (a multiple of \(format.channels) samples)")
        }
        if let bad = samples.firstIndex(where: { !$0.isFinite }) {
            throw .invalidValue(
                "sample \(bad)", Double(samples[bad]), fix: "pass finite samples, normally from -1 through 1")
        }
        self.samples = samples
        self.loops = loops
        self.channels = format.channels
        self.frameCount = samples.count / format.channels
    }

    /// Frames played so far (wrapping when looping).
    public var framePosition: Int { position.load(ordering: .relaxed) }

    /// Whether a non-looping source has played to its end.
    public var isFinished: Bool { !loops && framePosition >= frameCount }

    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        guard frameCount > 0 else { return 0 }
        var start = position.load(ordering: .relaxed)
        var written = 0
        samples.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            while written < frames {
                if start >= frameCount {
                    guard loops else { break }
                    start = 0
                }
                let chunk = min(frames &- written, frameCount &- start)
                (buffer + written &* channels).update(from: base + start &* channels, count: chunk &* channels)
                written = written &+ chunk
                start = start &+ chunk
            }
        }
        position.store(start, ordering: .relaxed)
        return written
    }
}
