import Foundation
import SharedSession

/// Records what a PipeWire sink plays, from its monitor, with a `pw-record` subprocess writing a
/// 32-bit float WAV file.
///
/// A separate client rather than one of the engine's own capture streams: the engine's monitor
/// recording is test-only API, and the recording should be what any other client hears.
/// Foundation's `Process` is enough here: the daemon was running before this program started, so
/// no child of ours holds a pipe that `Process` would wait on.
final class MonitorRecorder: Sendable {
    /// Why the recording could not be made.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let path: String
    private let process: Process
    /// Where the samples start in the file: pw-record (libsndfile) writes a fixed header up front
    /// and rewrites only its sizes when it closes.
    private let dataOffset: Int
    private static let bytesPerFrame = 8

    /// Starts `pw-record` on `sink`'s monitor and returns once samples are arriving in `path`.
    init(sink: String, path: String) throws {
        self.path = path
        try? FileManager.default.removeItem(atPath: path)
        let process = Process()
        // env finds pw-record on PATH and execs it, so the pid (and the SIGINT) is pw-record's own.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "pw-record", "--target", sink, "-P", "{ stream.capture.sink = true }",
            "--rate", "48000", "--channels", "2", "--format", "f32", path,
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw Failure(description: "could not start pw-record: \(error) (is pipewire-bin installed?)")
        }
        self.process = process
        // Linking the recorder to the monitor takes the session manager a moment; until samples
        // grow the file, scene time could not be tied to the recording.
        let deadline = ContinuousClock.now + .seconds(5)
        var offset: Int?
        while ContinuousClock.now < deadline, process.isRunning {
            if let found = Self.dataOffset(in: path), Self.size(of: path) > found + 2 * Self.bytesPerFrame * 1024 {
                offset = found
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        guard let offset else {
            if process.isRunning { process.interrupt() }
            process.waitUntilExit()
            throw Failure(
                description: "pw-record recorded nothing from \(sink)'s monitor within 5 s "
                    + "(exit status \(process.terminationStatus)); is the sink there (pw-cli ls Node)?")
        }
        dataOffset = offset
    }

    /// Frames in the file so far. pw-record writes each graph cycle as soon as it has run, so a
    /// change in this count follows the cycle by well under a millisecond.
    var framesWritten: Int { (Self.size(of: path) - dataOffset) / Self.bytesPerFrame }

    /// Waits for the recorder's next write and returns the frames the file holds then: the
    /// recording's position now, to within the poll (0.2 ms).
    func framesAtNextWrite() throws -> Int {
        let deadline = ContinuousClock.now + .seconds(2)
        let before = framesWritten
        while ContinuousClock.now < deadline {
            let frames = framesWritten
            if frames != before { return frames }
            Thread.sleep(forTimeInterval: 0.0002)
        }
        throw Failure(description: "pw-record stopped writing \(path) (no new samples for 2 s)")
    }

    /// Stops the recorder with SIGINT, so it writes the final sizes into the header, and reads
    /// the recording back.
    func stop() throws -> [Float] {
        if process.isRunning { process.interrupt() }
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        let (format, samples) = try WAVFile.read(from: path)
        guard format == .standard else {
            throw Failure(description: "pw-record wrote \(format), not \(AudioFormat.standard)")
        }
        return samples
    }

    /// stat(2) rather than FileManager: it is polled every millisecond through the scene.
    private static func size(of path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// The offset of the first sample, once the header is on disk.
    private static func dataOffset(in path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 4096) else { return nil }
        let bytes = [UInt8](header)
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8) else { return nil }
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = (0..<4).reduce(0) { $0 | Int(bytes[offset + 4 + $1]) << (8 * $1) }
            if bytes[offset..<offset + 4].elementsEqual("data".utf8) { return offset + 8 }
            offset += 8 + size + (size & 1)
        }
        return nil
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
