import Foundation
import SharedSessionTesting

/// The example's readings of rendered audio, through the package's own meter
/// (`SharedSessionTesting.LevelMeter`): every channel together, and `nil` for silence.
enum Levels {
    /// Below −120 dBFS is only the tail of a de-click fade: the example calls it silence.
    static let floor = -120.0

    /// RMS of frames `range` of interleaved `samples`, every channel together, in dBFS; `nil` for
    /// silence or an empty window. Frames past the end of `samples` count as silence.
    static func rmsDBFS(of samples: [Float], frames range: Range<Int>, channels: Int) -> Double? {
        guard range.upperBound > max(0, range.lowerBound) else { return nil }
        let meter = LevelMeter(channels: channels)
        let available = meter.clamp(range, in: samples)
        guard !available.isEmpty else { return nil }
        // Frames past the end are silence: they count in the mean square, not in the sum.
        // The meter refuses (throws) only for no audio, which the guard above has ruled out.
        guard let measured = try? meter.rmsOfAllChannels(samples, frames: available) else { return nil }
        let level = measured + 10 * log10(Double(available.count) / Double(range.upperBound - max(0, range.lowerBound)))
        return level > floor ? level : nil
    }

    /// RMS of only the sine partials at `frequencies` in the `milliseconds` of interleaved `samples` that
    /// end at frame `endFrame`; `nil` for silence or a window outside `samples`. Read through a Hann
    /// window: the voice swells three times a second, and with every sample counted alike it reads
    /// at up to -59.5 dBFS in the movie's partials while the movie is silent (a CI run read -59.29
    /// at a mark that expects silence); through Hann, at most -96.7.
    static func toneRMSDBFS(
        of samples: [Float], frequencies: [Double], endFrame: Int, milliseconds: Int, sampleRate: Int, channels: Int
    ) -> Double? {
        let meter = LevelMeter(sampleRate: sampleRate, channels: channels)
        let end = min(endFrame, meter.frameCount(samples))
        let start = max(0, end - milliseconds * sampleRate / 1000)
        guard end > start else { return nil }
        guard
            let level = try? meter.partialsLevel(
                samples, frequencies: frequencies, frames: start..<end, window: .hann)
        else {
            return nil
        }
        return level > floor ? level : nil
    }
}
