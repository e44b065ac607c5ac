import Synchronization

/// A stereo sine tone: the test signal of the offline and PipeWire tests, and a stand-in for a clip.
public final class SineSource: AudioSource {
    /// Tone frequency in hertz.
    public let frequency: Double
    /// Peak amplitude, 0 through 1.
    public let amplitude: Float
    private let sampleRate: Double
    private let channels: Int
    /// Phase in cycles (0 ..< 1) as the bits of a Double; only the render thread writes it.
    private let phaseBits = Atomic<UInt64>(0)

    /// Creates a tone.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` if the frequency is not between 0 and
    ///   the Nyquist frequency or the amplitude is not between 0 and 1.
    public init(frequency: Double, amplitude: Float, format: AudioFormat = .standard) throws(SessionError) {
        guard frequency.isFinite, frequency > 0, frequency < Double(format.sampleRate) / 2 else {
            throw .invalidValue(
                "frequency", Double(frequency),
                fix: "use a frequency above 0 and below \(format.sampleRate / 2) Hz")
        }
        try SessionError.checkUnitInterval(amplitude, name: "amplitude")
        self.frequency = frequency
        self.amplitude = amplitude
        self.sampleRate = Double(format.sampleRate)
        self.channels = format.channels
    }

    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        var phase = Double(bitPattern: phaseBits.load(ordering: .relaxed))
        let increment = frequency / sampleRate
        let twoPi = 2 * Double.pi
        var index = 0
        for _ in 0..<frames {
            let value = amplitude * Float(sin(twoPi * phase))
            for _ in 0..<channels {
                buffer[index] = value
                index &+= 1
            }
            phase += increment
            if phase >= 1 { phase -= 1 }
        }
        phaseBits.store(phase.bitPattern, ordering: .relaxed)
        return frames
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
