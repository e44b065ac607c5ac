import SharedSession

#if canImport(Glibc)
    import Glibc
#endif

/// Level measurements on rendered audio, as a person with a meter would take them.
enum Measure {
    static func rms(_ samples: ArraySlice<Float>) -> Float {
        guard !samples.isEmpty else { return 0 }
        var sum: Double = 0
        for sample in samples { sum += Double(sample) * Double(sample) }
        return Float((sum / Double(samples.count)).squareRoot())
    }

    static func rms(_ samples: [Float]) -> Float { rms(samples[...]) }

    static func decibels(_ value: Float) -> Float { 20 * log10(max(value, 1e-9)) }

    /// RMS in dBFS of the last `milliseconds` of interleaved stereo `samples`.
    static func tailLevel(_ samples: [Float], milliseconds: Int = 100) -> Float {
        let count = AudioFormat.standard.sampleRate * milliseconds / 1000 * 2
        return decibels(rms(samples.suffix(count)))
    }

    /// The largest difference between consecutive frames of one channel.
    static func largestStep(_ samples: [Float], channel: Int = 0) -> Float {
        var largest: Float = 0
        var index = channel + 2
        while index < samples.count {
            largest = max(largest, abs(samples[index] - samples[index - 2]))
            index += 2
        }
        return largest
    }

    /// The first frame at which channel 0 is at or below `threshold`, if any.
    static func firstFrame(in samples: [Float], atOrBelow threshold: Float) -> Int? {
        stride(from: 0, to: samples.count, by: 2).first { samples[$0] <= threshold }.map { $0 / 2 }
    }

    static func firstFrame(in samples: [Float], atOrAbove threshold: Float) -> Int? {
        stride(from: 0, to: samples.count, by: 2).first { samples[$0] >= threshold }.map { $0 / 2 }
    }
}

/// A session on an offline engine with the main stream open: a 1 kHz sine at amplitude 0.5
/// (−9.03 dBFS RMS), or a constant 0.5 when the test reads the gain envelope sample by sample.
struct OfflineScene {
    let engine: OfflineEngine
    let session: SharedSession
    let main: StreamHandle

    enum Signal { case sine, constant }

    init(policy: SessionPolicy = .default, signal: Signal = .sine, input: (any AudioSource)? = nil) throws {
        engine = OfflineEngine(input: input)
        session = SharedSession(engine: engine, policy: policy)
        let source: any AudioSource
        switch signal {
        case .sine: source = try SineSource(frequency: 1000, amplitude: 0.5)
        case .constant: source = try PCMBufferSource(samples: [0.5, 0.5], loops: true)
        }
        main = try session.openMainStream(source: source)
    }

    /// Renders `milliseconds` in quanta of `quantum` and returns the main stream's stem.
    func renderMain(milliseconds: Int, quantum: Int = 1024) throws -> [Float] {
        try engine.render(duration: .milliseconds(milliseconds), quantum: quantum).stems[main.id] ?? []
    }

    /// Level of the main stream over the last 100 ms of `milliseconds` rendered.
    func mainLevel(after milliseconds: Int, quantum: Int = 1024) throws -> Float {
        Measure.tailLevel(try renderMain(milliseconds: milliseconds, quantum: quantum))
    }
}

/// The level of a 0.5-amplitude sine: 20·log10(0.5/√2).
let fullLevel: Float = -9.0309
