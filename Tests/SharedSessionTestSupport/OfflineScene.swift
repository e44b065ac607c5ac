package import SharedSession
package import SharedSessionTesting

/// The meter every core test reads rendered audio with: left channel of 48 kHz stereo.
package let meter = LevelMeter()

/// Whether the last `milliseconds` of interleaved stereo `samples` are digital silence on both channels.
/// Throws if `samples` holds less than `milliseconds`: a stem that went missing is not silence.
package func isSilent(_ samples: [Float], lastMilliseconds milliseconds: Double) throws(MeasurementError) -> Bool {
    let count = meter.frameCount(samples)
    return try meter.isSilent(samples, frames: (count - meter.frames(milliseconds: milliseconds))..<count)
}

/// A session on an offline engine with the main stream open: a 1 kHz sine at amplitude 0.5
/// (−9.03 dBFS RMS), a constant 0.5 when the test reads the gain envelope sample by sample, or
/// each frame's own index ÷ 65536 (2 s, not looping) when it reads the media position.
package struct OfflineScene {
    package let engine: OfflineEngine
    package let session: SharedSession
    package let main: StreamHandle

    package enum Signal { case sine, constant, frameIndex }

    package init(policy: SessionPolicy = .default, signal: Signal = .sine, input: (any AudioSource)? = nil) throws {
        engine = OfflineEngine(input: input)
        session = SharedSession(engine: engine, policy: policy)
        let source: any AudioSource
        switch signal {
        case .sine: source = try SineSource(frequency: 1000, amplitude: 0.5)
        case .constant: source = try PCMBufferSource(samples: [0.5, 0.5], loops: true)
        case .frameIndex:
            source = try PCMBufferSource(samples: (0..<96_000).flatMap { [Float($0) / 65536, Float($0) / 65536] })
        }
        main = try session.openMainStream(source: source)
    }

    /// Renders `milliseconds` in quanta of `quantum` and returns the main stream's stem, which must be
    /// there and hold every frame rendered.
    package func renderMain(milliseconds: Int, quantum: Int = 1024) throws -> [Float] {
        try engine.render(duration: .milliseconds(milliseconds), quantum: quantum).stem(main)
    }

    /// Level of the main stream over the last 100 ms of `milliseconds` rendered.
    package func mainLevel(after milliseconds: Int, quantum: Int = 1024) throws -> Double {
        try meter.rms(try renderMain(milliseconds: milliseconds, quantum: quantum), lastMilliseconds: 100)
    }
}

/// The level of a 0.5-amplitude sine: 20·log10(0.5/√2).
package let fullLevel: Double = -9.0309
