import Foundation

/// Measures levels in rendered audio.
enum LevelMeter {
    /// RMS of the last `milliseconds` of interleaved `samples`, in dB relative to a full-scale
    /// constant (sox's "RMS lev dB"; a full-scale sine reads −3.01). `nil` for digital silence.
    static func rmsDBFS(of samples: [Float], lastMilliseconds milliseconds: Int, sampleRate: Int, channels: Int)
        -> Double?
    {
        let count = min(samples.count, milliseconds * sampleRate / 1000 * channels)
        guard count > 0 else { return nil }
        var sum: Double = 0
        for sample in samples[(samples.count - count)...] { sum += Double(sample) * Double(sample) }
        let rms = (sum / Double(count)).squareRoot()
        // Below −120 dB is only the tail of a de-click fade: call it silence.
        guard rms > 1e-6 else { return nil }
        return 20 * log10(rms)
    }

    /// A level as the timeline prints it.
    static func format(_ level: Double?) -> String {
        guard let level else { return "silent" }
        return String(format: "%.1f dBFS", level)
    }
}
