import Foundation
import SharedSession

/// Speech made at test time as a far end's voice arrives: espeak-ng says the text, ffmpeg sends it
/// through Opus (libopus 32 kb/s, VoIP) and decodes it at 48 kHz mono. Both commands are installed
/// by `Scripts/install media`; a machine without them fails the tests that ask for speech, never
/// skips them.
package enum Speech {
    /// A voice and pace of espeak-ng: `voice` is its `-v` (`en-us`, `en-gb+f3`, `de`), `arguments`
    /// the rest (`-s 140 -g 30`: 140 words a minute with 300 ms between words).
    package struct Voice: Sendable, CustomStringConvertible {
        package let voice: String
        package let arguments: [String]
        package init(_ voice: String, _ arguments: [String]) {
            self.voice = voice
            self.arguments = arguments
        }
        package var description: String { ([voice] + arguments).joined(separator: " ") }
    }

    private static let directory: String = {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("sharedsession-speech-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// `text` said by `voice`, through Opus, mono 48 kHz, from its first frame at or above `threshold`
    /// (linear peak) to its last: the silence espeak-ng puts around it is cut.
    package static func make(_ text: String, voice: Voice, trimmedAt threshold: Float) throws -> [Float] {
        let name = "\(directory)/\(UInt64.random(in: 0...UInt64.max))"
        defer {
            for suffix in [".wav", ".opus", ".f32"] { unlink(name + suffix) }
        }
        try run("espeak-ng", ["-v", voice.voice] + voice.arguments + ["-w", name + ".wav", text])
        try run(
            "ffmpeg",
            [
                "-loglevel", "error", "-y", "-i", name + ".wav", "-c:a", "libopus", "-b:a", "32k", "-application",
                "voip", name + ".opus",
            ])
        try run(
            "ffmpeg",
            [
                "-loglevel", "error", "-y", "-i", name + ".opus", "-ar", "48000", "-ac", "1", "-f", "f32le",
                name + ".f32",
            ])
        let data = try Data(contentsOf: URL(fileURLWithPath: name + ".f32"))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        guard let first = samples.firstIndex(where: { abs($0) >= threshold }),
            let last = samples.lastIndex(where: { abs($0) >= threshold })
        else { throw SpeechError(description: "espeak-ng said nothing audible for \(voice): \(text)") }
        return Array(samples[first...last])
    }

    struct SpeechError: Error, CustomStringConvertible {
        let description: String
    }

    private static func run(_ command: String, _ arguments: [String]) throws {
        try Tool.run(
            command, arguments,
            missing: "the \(command) command is not installed: run Scripts/install media (Debian's espeak-ng "
                + "and ffmpeg packages)")
    }
}
