/// The sample format every SharedSession engine renders.
///
/// Streams are interleaved 32-bit float at one sample rate, so no stream is ever
/// resampled inside the process (Apple's advice for games holds for players too:
/// keep every asset at the output rate).
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public let sampleRate: Int
    /// Interleaved channels per frame.
    public let channels: Int

    /// 48 kHz stereo, the format of both engines.
    public static let standard = AudioFormat(sampleRate: 48_000, channels: 2)

    /// The largest quantum (frames per render call) an engine must accept: the 4096-frame slice of a
    /// locked screen, doubled for headroom, and PipeWire's `clock.max-quantum` ceiling.
    public static let maximumQuantum = 8192

    /// Creates a format; use ``standard`` unless an engine documents otherwise.
    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// The number of whole frames in `duration`, rounded to the nearest frame.
    public func frames(in duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let exact = Double(seconds) * Double(sampleRate) + Double(attoseconds) * 1e-18 * Double(sampleRate)
        return Int(exact.rounded())
    }

    /// The duration of `frames` frames.
    public func duration(ofFrames frames: Int) -> Duration {
        .nanoseconds(Int64((Double(frames) * 1e9 / Double(sampleRate)).rounded()))
    }

    public var description: String { "\(sampleRate) Hz, \(channels) ch, f32" }
}
