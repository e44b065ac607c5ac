import Foundation
import SharedSession
import SharedSessionMedia
import SharedSessionTestSupport
import Testing

/// A failure a helper reports with what went wrong.
struct TestProblem: Error, CustomStringConvertible {
    let description: String
}

/// Media made for the tests by the `ffmpeg` command (installed by `Scripts/install`), in a
/// directory of this test run's own. A machine without `ffmpeg` fails these tests; it never skips them.
enum MediaFiles {
    static let directory: String = {
        let base = FileManager.default.temporaryDirectory.path + "/sharedsession-media-\(getpid())"
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        // The media are this run's own (about 34 MB): they go when the test process exits.
        atexit { try? FileManager.default.removeItem(atPath: MediaFiles.directory) }
        return base
    }()

    /// The path of `name` in the test directory.
    static func path(_ name: String) -> String { directory + "/" + name }

    /// Runs `ffmpeg -y <arguments> <path(name)>` and returns the path; the same name is made once per run.
    static func make(_ name: String, _ arguments: [String]) throws -> String {
        let output = path(name)
        if FileManager.default.fileExists(atPath: output) { return output }
        // Written under another name first, so a concurrently running test never reads half a file.
        let partial = path("partial-\(UUID().uuidString)-\(name)")
        try run(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"] + arguments + [partial])
        _ = try? FileManager.default.moveItem(atPath: partial, toPath: output)
        try? FileManager.default.removeItem(atPath: partial)
        return output
    }

    /// A sine of `frequency` Hz (lavfi `sine`: amplitude 1/8, −21.07 dBFS RMS) lasting `seconds`,
    /// at `rate` with `layout` (a pan filter layout such as "mono", "stereo", "5.1"), encoded with
    /// `codec` (plus `extra` options) into `name`.
    static func tone(
        _ name: String, frequency: Double = 440, seconds: Double = 2, rate: Int = 48_000, layout: String = "stereo",
        codec: [String], extra: [String] = []
    ) throws -> String {
        let channels = layoutChannels[layout] ?? "c0"
        let filter =
            "sine=frequency=\(frequency):sample_rate=\(rate):duration=\(seconds),pan=\(layout)|\(channels)"
        return try make(name, ["-f", "lavfi", "-i", filter] + codec + extra)
    }

    /// Pan filter channel definitions that put the mono sine on every channel.
    static let layoutChannels = [
        "mono": "c0=c0",
        "stereo": "c0=c0|c1=c0",
        "5.1": "FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0",
    ]

    private static func run(_ arguments: [String]) throws {
        try Tool.run(
            "ffmpeg", arguments,
            missing: "the ffmpeg command is not installed: run Scripts/install media (Debian's ffmpeg package)")
    }
}

/// Rendering a source the way an offline host does, and measuring what came out.
enum Listen {
    /// Renders until the source ends (or `limit` frames), in quanta of `quantum`, waiting for the
    /// decoder before each quantum so the measurement is not about decoding speed.
    static func renderAll(_ source: MediaFileSource, limit: Int = 48_000 * 30, quantum: Int = 1024) -> [Float] {
        var output: [Float] = []
        var buffer = [Float](repeating: 0, count: quantum * 2)
        while output.count / 2 < limit {
            // A generous wait: it returns as soon as the decoder is ahead, and a short count below is
            // taken as the end, so a decoder starved of CPU (the sanitizer pass, beside the CPU-bound
            // suites) must not pass for one.
            source.waitUntilBuffered(timeout: .seconds(60))
            let count = buffer.withUnsafeMutableBufferPointer { source.render(into: $0.baseAddress!, frames: quantum) }
            output.append(contentsOf: buffer[0..<count * 2])
            if count < quantum { break }
        }
        return output
    }

    /// Renders exactly `frames` frames (silence where the source returned fewer).
    static func render(_ source: MediaFileSource, frames: Int, quantum: Int = 1024, wait: Bool = true) -> [Float] {
        var output: [Float] = []
        var buffer = [Float](repeating: 0, count: quantum * 2)
        var left = frames
        while left > 0 {
            if wait { source.waitUntilBuffered(timeout: .seconds(60)) }
            let asked = min(quantum, left)
            let count = buffer.withUnsafeMutableBufferPointer { source.render(into: $0.baseAddress!, frames: asked) }
            output.append(contentsOf: buffer[0..<count * 2])
            output.append(contentsOf: repeatElement(0, count: (asked - count) * 2))
            left -= asked
        }
        return output
    }

    /// One channel of interleaved stereo.
    static func channel(_ samples: [Float], _ index: Int) -> [Float] {
        stride(from: index, to: samples.count, by: 2).map { samples[$0] }
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    static func decibels(_ value: Double) -> Double { 20 * log10(max(value, 1e-12)) }

    /// RMS level in dBFS of a mono signal.
    static func level(_ samples: ArraySlice<Float>) -> Double { decibels(rms(samples)) }

    /// The frequency of a steady tone from its rising zero crossings, interpolated between samples.
    static func frequency(_ samples: ArraySlice<Float>, rate: Double = 48_000) -> Double {
        var crossings: [Double] = []
        var last = samples.first ?? 0
        for (offset, sample) in samples.enumerated() {
            if offset > 0, last < 0, sample >= 0 {
                crossings.append(Double(offset - 1) + Double(-last / (sample - last)))
            }
            last = sample
        }
        guard crossings.count >= 2, let first = crossings.first, let end = crossings.last else { return 0 }
        return Double(crossings.count - 1) * rate / (end - first)
    }

    /// The largest difference between consecutive samples of a mono signal.
    static func largestStep(_ samples: ArraySlice<Float>) -> Float {
        zip(samples.dropFirst(), samples).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }
}

/// The level of lavfi's `sine` (amplitude 1/8): 20·log10(0.125/√2).
let sineLevel = 20 * log10(0.125 / 2.0.squareRoot())
