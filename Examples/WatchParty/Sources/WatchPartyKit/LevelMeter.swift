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

    /// RMS of only the sine partials at `frequencies` in the `milliseconds` of interleaved `samples`
    /// that end at frame `endFrame`, in the same dB as ``rmsDBFS(of:lastMilliseconds:sampleRate:channels:)``.
    /// `nil` for silence or a window outside `samples`.
    ///
    /// This reads one voice out of a mix, as long as the voices sit at different frequencies: a
    /// Goertzel filter per partial and channel gives the partial's amplitude A, whose power A²/2 is
    /// summed over the partials and averaged over the channels. Over a window holding whole cycles of
    /// every voice (100 ms of the soundtrack's whole-hertz partials), other partials add nothing.
    static func toneRMSDBFS(
        of samples: [Float], frequencies: [Double], endFrame: Int, milliseconds: Int, sampleRate: Int, channels: Int
    ) -> Double? {
        let frames = milliseconds * sampleRate / 1000
        let end = min(endFrame, samples.count / channels)
        let start = max(0, end - frames)
        guard end > start else { return nil }
        let count = Double(end - start)
        var power: Double = 0
        for channel in 0..<channels {
            for frequency in frequencies {
                let coefficient = 2 * cos(2 * Double.pi * frequency / Double(sampleRate))
                var previous: Double = 0
                var beforePrevious: Double = 0
                for frame in start..<end {
                    let value = Double(samples[frame * channels + channel]) + coefficient * previous - beforePrevious
                    beforePrevious = previous
                    previous = value
                }
                let magnitudeSquared =
                    previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
                let amplitude = 2 * max(0, magnitudeSquared).squareRoot() / count
                power += amplitude * amplitude / 2
            }
        }
        let rms = (power / Double(channels)).squareRoot()
        // The same floor as the stem meter: below −120 dB is a fade's tail, not the movie.
        guard rms > 1e-6 else { return nil }
        return 20 * log10(rms)
    }

    /// RMS of frames `start..<end` of interleaved `samples` in the same dB, `nil` for silence or an
    /// empty window. Frames past the end of `samples` count as silence.
    static func rmsDBFS(of samples: [Float], frames range: Range<Int>, channels: Int) -> Double? {
        let lower = max(0, range.lowerBound) * channels
        let upper = max(0, range.upperBound) * channels
        guard upper > lower else { return nil }
        var sum: Double = 0
        var index = lower
        let available = min(upper, samples.count)
        while index < available {
            let sample = Double(samples[index])
            sum += sample * sample
            index += 1
        }
        let rms = (sum / Double(upper - lower)).squareRoot()
        guard rms > 1e-6 else { return nil }
        return 20 * log10(rms)
    }

    /// A level as the timeline prints it.
    static func format(_ level: Double?) -> String {
        guard let level else { return "silent" }
        return String(format: "%.1f dBFS", level)
    }
}
