package import Foundation

/// What the test suites read from this repository (the fuzz seeds, corpus and regressions) and the
/// command-line tools they run (ffmpeg, espeak-ng): written once for the four suites that each had
/// their own copy.
package enum RepositoryFiles {
    /// The repository's root: this file is `Tests/SharedSessionTestSupport/RepositoryFiles.swift`.
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The files in `folder` (a path from the root), sorted by name.
    package static func files(in folder: String) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: root.appending(path: folder), includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}

/// A command-line tool a test runs.
package enum Tool {
    /// A tool that is missing or failed, with what to do about it.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The path of `command` on `PATH`, if it is installed.
    package static func locate(_ command: String) -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/\(command)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `command` with `arguments` and returns what it printed on its error output (where ffmpeg
    /// prints its filters' reports). Throws `missing` when it is not installed, and that output when it
    /// fails.
    package static func errorOutput(of command: String, _ arguments: [String], missing: String) throws -> String {
        guard let path = locate(command) else { throw Failure(description: missing) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(command) \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }

    /// Runs `command` with `arguments`, its output discarded. Throws `missing` when it is not installed,
    /// and its error output when it fails.
    package static func run(_ command: String, _ arguments: [String], missing: String) throws {
        _ = try errorOutput(of: command, arguments, missing: missing)
    }
}
