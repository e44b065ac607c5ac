import Foundation
import SharedSession

/// FFmpeg's `ebur128` filter: the reference loudness meter, outside the library's own.
enum EBUR128 {
    struct ReportMissing: Error, CustomStringConvertible {
        let report: String
        var description: String { "no integrated loudness in FFmpeg's report: \(report)" }
    }

    /// The integrated (gated) loudness in LUFS of `samples[frames]`, interleaved stereo at 48 kHz.
    static func integrated(_ samples: [Float], frames: Range<Int>) throws -> Double {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "watch-party-ebur128-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).wav"
        ).path
        defer { unlink(path) }
        try WAVFile.write(Array(samples[(frames.lowerBound * 2)..<(frames.upperBound * 2)]), to: path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-hide_banner", "-nostats", "-i", path, "-af", "ebur128", "-f", "null", "-"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let report = String(decoding: data, as: UTF8.self)
        guard let summary = report.range(of: "Integrated loudness:"),
            let line = report[summary.upperBound...].split(separator: "\n").first(where: { $0.contains("I:") }),
            let value = line.split(separator: " ").compactMap({ Double($0) }).first
        else { throw ReportMissing(report: String(report.suffix(400))) }
        return value
    }
}
