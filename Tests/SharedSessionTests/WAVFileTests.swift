import Foundation
import SharedSession
import Testing

@Suite("WAV files written and read without Foundation")
struct WAVFileTests {
    private static func temporaryPath(_ name: String) -> String {
        "/tmp/sharedsession-wav-\(UInt64.random(in: 0...UInt64.max))-\(name)"
    }

    @Test("a written file reads back with its format and every sample, bit for bit")
    func roundTrip() throws {
        let path = Self.temporaryPath("round-trip.wav")
        let format = AudioFormat(sampleRate: 44_100, channels: 1)
        let samples: [Float] = [0, 1, -1, 0.5, .leastNonzeroMagnitude, -.greatestFiniteMagnitude, 0.25]
        try WAVFile.write(samples, format: format, to: path)
        let (read, readSamples) = try WAVFile.read(from: path)
        #expect(read == format)
        #expect(readSamples.map(\.bitPattern) == samples.map(\.bitPattern))
    }

    @Test("an empty file of samples is a valid WAV file")
    func empty() throws {
        let path = Self.temporaryPath("empty.wav")
        try WAVFile.write([], to: path)
        let (format, samples) = try WAVFile.read(from: path)
        #expect(format == .standard)
        #expect(samples.isEmpty)
    }

    @Test("writing into a folder that does not exist names the file and says to create the folder")
    func writeIntoMissingFolder() {
        let path = Self.temporaryPath("missing") + "/mix.wav"
        #expect {
            try WAVFile.write([0, 0], to: path)
        } throws: { error in
            guard let error = error as? SessionError else { return false }
            return error.code == .fileError && error.message.contains(path)
                && error.message.contains("create the folder")
        }
    }

    @Test("reading a file that is not there names it and says to check the path")
    func readMissingFile() {
        let path = Self.temporaryPath("absent.wav")
        #expect {
            _ = try WAVFile.read(from: path)
        } throws: { error in
            guard let error = error as? SessionError else { return false }
            return error.code == .fileError && error.message.contains(path) && error.message.contains("check the path")
        }
    }

    @Test("reading a folder names it and says it is a folder")
    func readFolder() {
        #expect {
            _ = try WAVFile.read(from: "/tmp")
        } throws: { error in
            guard let error = error as? SessionError else { return false }
            return error.code == .fileError && error.message.contains("/tmp") && error.message.contains("folder")
        }
    }

    @Test("reading a file that is not a WAV file names it and says how to convert it")
    func readNotWAV() throws {
        let path = Self.temporaryPath("text.wav")
        try Data("not a sound".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try WAVFile.read(from: path)
        } throws: { error in
            guard let error = error as? SessionError else { return false }
            return error.code == .fileError && error.message.contains(path) && error.message.contains("convert it")
        }
    }
}
