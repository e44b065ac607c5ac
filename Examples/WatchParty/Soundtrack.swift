import Foundation
import SharedSession

/// The scene's synthesized audio. Each voice sits in its own band (main 220/330 Hz, feed clip
/// 880/1320 Hz, far-end voice 600/1200 Hz) so a spectrum or a listener can tell them apart in the mix.
enum Soundtrack {
    /// The movie's partials in hertz: what a meter listens for to read the movie out of the mix.
    static let movieFrequencies: [Double] = [220, 330]

    /// The movie's soundtrack: an A3 + E4 fifth, looped forever.
    ///
    /// Each partial has amplitude 0.5, so the stem's RMS is 0.5 × gain: −6.02 dBFS + 20·log10(gain).
    static func movie() throws(SessionError) -> PCMBufferSource {
        // Whole-hertz partials over exactly one second loop without a seam.
        try PCMBufferSource(samples: synthesize(seconds: 1, partials: movieFrequencies.map { ($0, 0.5) }), loops: true)
    }

    /// A short clip from the social feed: a two-partial bell that fades in and out, so it starts and
    /// ends without a click and the stream can be closed after it ran out.
    static func feedClip(seconds: Double) throws(SessionError) -> PCMBufferSource {
        let fade = 0.03
        return try PCMBufferSource(
            samples: synthesize(seconds: seconds, partials: [(880, 0.25), (1320, 0.1)]) { time in
                Float(min(1, time / fade, (seconds - time) / fade))
            })
    }

    /// The far end of the voice chat: a 600 Hz "voice" shaped into three syllables a second. The
    /// syllables never fall fully silent, so a 100 ms level reading does not depend on where it lands.
    static func farEndVoice() throws(SessionError) -> PCMBufferSource {
        try PCMBufferSource(
            samples: synthesize(seconds: 1, partials: [(600, 0.3), (1200, 0.12)]) { time in
                let syllable = sin(Double.pi * 3 * time)
                return Float(0.35 + 0.65 * syllable * syllable)
            },
            loops: true)
    }

    /// What the offline engine's "microphone" hears while the voice session captures.
    static func microphone() throws(SessionError) -> SineSource {
        try SineSource(frequency: 300, amplitude: 0.2)
    }

    /// Interleaved stereo samples of summed sines, with an optional envelope over time in seconds.
    private static func synthesize(
        seconds: Double, partials: [(frequency: Double, amplitude: Float)], envelope: (Double) -> Float = { _ in 1 }
    ) -> [Float] {
        let format = AudioFormat.standard
        let frames = Int((seconds * Double(format.sampleRate)).rounded())
        var samples = [Float](repeating: 0, count: frames * format.channels)
        for frame in 0..<frames {
            let time = Double(frame) / Double(format.sampleRate)
            var value: Float = 0
            for partial in partials {
                value += partial.amplitude * Float(sin(2 * Double.pi * partial.frequency * time))
            }
            value *= envelope(time)
            for channel in 0..<format.channels { samples[frame * format.channels + channel] = value }
        }
        return samples
    }
}
