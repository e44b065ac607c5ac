import Foundation
import Testing

@testable import WatchPartyKit

/// `--output` and `--record` are checked before the scene plays: a path whose folder is missing fails
/// at once with exit status 2, not after the whole scene has played.
@Suite struct OutputFileTests {
    /// A fresh folder of this test's own, removed by the caller.
    static func makeFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("watch-party-output-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        return folder
    }

    @Test func aFileInAnExistingFolderPassesAndNothingIsCreated() throws {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/mix.wav"
        try OutputFile.check(path, option: "--output")
        #expect(!FileManager.default.fileExists(atPath: path))
        // An existing file is overwritten, as before.
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        try OutputFile.check(path, option: "--output")
    }

    @Test func aFolderThatDoesNotExistIsRefusedNamingIt() throws {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let missing = folder + "/no-such-folder"
        #expect(throws: OutputFile.Unwritable.self) { try OutputFile.check(missing + "/x.wav", option: "--output") }
        do {
            try OutputFile.check(missing + "/x.wav", option: "--output")
        } catch {
            #expect(
                error.description
                    == "--output \(missing)/x.wav: the folder \(missing) does not exist; create it first, "
                    + "or write somewhere else")
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func aFolderOrAFileInPlaceOfTheFolderIsRefused() throws {
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/plain-file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))

        let underAFile = #expect(throws: OutputFile.Unwritable.self) {
            try OutputFile.check(file + "/x.wav", option: "--record")
        }
        #expect(underAFile?.description == "--record \(file)/x.wav: \(file) is not a folder")
        let aFolder = #expect(throws: OutputFile.Unwritable.self) { try OutputFile.check(folder, option: "--output") }
        #expect(aFolder?.description.hasPrefix("--output \(folder): is a folder; give a file name in it") == true)
        let endsInSlash = #expect(throws: OutputFile.Unwritable.self) {
            try OutputFile.check(folder + "/", option: "--output")
        }
        #expect(endsInSlash?.description.contains("not a file name") == true)
        #expect(throws: OutputFile.Unwritable.self) { try OutputFile.check("", option: "--output") }
    }

    /// The command itself, built beside this test bundle (`swift build --build-tests` builds both): it
    /// stops before playing anything, with exit status 2 and the reason on standard error.
    @Test func theCommandFailsBeforePlayingWithExitStatus2() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("watch-party").path
        try #require(
            FileManager.default.isExecutableFile(atPath: binary),
            "watch-party is not built beside the tests at \(binary): run `swift build --build-tests`")
        let folder = try Self.makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let output = folder + "/missing/x.wav"

        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--scene", SceneReaderTests.defaultScene, "--output", output, "--plain"]
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        let started = ContinuousClock.now
        try process.run()
        let printed = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let said = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        #expect(process.terminationStatus == 2)
        #expect(
            said.contains("watch-party: --output \(output): the folder \(folder)/missing does not exist"), "\(said)")
        // Nothing played: no scene header, no media made, and well under the scene's own duration.
        #expect(!printed.contains("watch-party: \""), "\(printed)")
        #expect(ContinuousClock.now - started < .seconds(10))
    }
}
