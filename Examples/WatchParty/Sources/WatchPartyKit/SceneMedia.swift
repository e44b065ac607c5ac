import Foundation
public import SharedSession
import Synchronization

/// The media the default scene plays, made on this machine with Debian's `ffmpeg` the first time a
/// scene asks for them, so nothing the example plays comes from outside.
///
/// Every file is a few sine partials at whole-ten hertz, each in its own band (movie 220/330 Hz,
/// feed clip 880/1320 Hz, far-end voice 600/1200 Hz, chime 1560/2080 Hz): a meter can read any one of
/// them out of a mix over 100 ms, and a listener can tell them apart. They are encoded as a real
/// player would get them: the movie's soundtrack as AAC in MP4, the clip as Opus in Matroska, the
/// voice as Ogg Opus, the chime as FLAC.
public enum GeneratedMedia {
    /// A file `make(_:)` knows how to produce: its ffmpeg source filter and encoder options.
    struct Recipe {
        let seconds: Double
        let channels: String
        let expression: String
        let codec: [String]
    }

    static let recipes: [String: Recipe] = [
        // A steady A3 + E4 fifth, 0.25 each: RMS 0.25, -12.04 dBFS (AAC keeps it within 0.01 dB).
        "movie.mp4": Recipe(
            seconds: 40, channels: "stereo", expression: "0.25*sin(2*PI*220*t)+0.25*sin(2*PI*330*t)",
            codec: ["-c:a", "aac", "-b:a", "192k"]),
        // A bell-like clip that fades in and out over 30 ms, so it starts and ends without a click.
        "feed-clip.mkv": Recipe(
            seconds: 3, channels: "stereo",
            expression: "(0.25*sin(2*PI*880*t)+0.1*sin(2*PI*1320*t))*min(1\\,min(t/0.03\\,(3-t)/0.03))",
            codec: ["-c:a", "libopus", "-b:a", "128k"]),
        // Voice-like bursts: three syllables a second that never fall fully silent.
        "far-end-voice.ogg": Recipe(
            seconds: 30, channels: "mono",
            expression: "(0.3*sin(2*PI*600*t)+0.12*sin(2*PI*1200*t))*(0.35+0.65*pow(sin(PI*3*t)\\,2))",
            codec: ["-c:a", "libopus", "-b:a", "64k"]),
        // A two-note chime that decays in 0.6 s.
        "chime.flac": Recipe(
            seconds: 0.6, channels: "stereo",
            expression: "(0.3*sin(2*PI*1560*t)*lt(t\\,0.15)+0.3*sin(2*PI*2080*t)*gte(t\\,0.15))*exp(-6*t)"
                + "*min(1\\,t/0.005)*min(1\\,(0.6-t)/0.02)",
            codec: ["-c:a", "flac"]),
    ]

    /// The names of the files this can make.
    public static var names: [String] { recipes.keys.sorted() }

    /// Makes `path` if it is missing and its file name is one of ``names``.
    ///
    /// - Throws: ``SessionError`` with code `fileError` when the file is missing and cannot be made.
    public static func ensure(_ media: Scene.Media, scene: String) throws(SessionError) {
        let path = media.path
        guard !FileManager.default.fileExists(atPath: path) else { return }
        let name = (path as NSString).lastPathComponent
        guard let recipe = recipes[name] else {
            throw SessionError(
                code: .fileError,
                message: "\(scene):\(media.line): the media file \(media.written) (\(path)) does not exist; "
                    + "give a path to a file, or one of \(names.joined(separator: ", ")) to have it made")
        }
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw SessionError(code: .fileError, message: "could not create \(folder) for the media: \(error)")
        }
        // Made under a temporary name and moved into place, so an interrupted run leaves no half file.
        let partial = (folder as NSString).appendingPathComponent(".partial-\(getpid())-" + name)
        let filter = "aevalsrc=\(recipe.expression):s=48000:c=\(recipe.channels):d=\(recipe.seconds)"
        let format = (name as NSString).pathExtension == "ogg" ? ["-f", "ogg"] : []
        let arguments =
            ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", filter]
            + recipe.codec + format + [partial]
        try runFFmpeg(arguments, making: path)
        do {
            try FileManager.default.moveItem(atPath: partial, toPath: path)
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            // Another run may have made it at the same moment.
            guard FileManager.default.fileExists(atPath: path) else {
                throw SessionError(code: .fileError, message: "could not move the new \(name) into \(folder): \(error)")
            }
        }
    }

    static func runFFmpeg(_ arguments: [String], making path: String) throws(SessionError) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg"] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw SessionError(
                code: .fileError,
                message: "could not run ffmpeg to make \(path): \(error); install it (Scripts/install)")
        }
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SessionError(
                code: .fileError,
                message: "ffmpeg could not make \(path) (status \(process.terminationStatus)): "
                    + String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                    + (process.terminationStatus == 127 ? "; install it (Scripts/install)" : ""))
        }
    }
}

/// Opens the scene's media as sources the session can play.
///
/// Each file is decoded once, up front, by Debian's `ffmpeg` into the engine's format (48 kHz stereo
/// float) and played from memory by a `PCMBufferSource`, so nothing decodes while the scene plays.
final class MediaLibrary: Sendable {
    private let decoded: [String: [Float]]

    /// Makes any missing generated media and decodes every file the scene plays.
    init(scene: Scene) throws(SessionError) {
        var decoded: [String: [Float]] = [:]
        for media in scene.media where decoded[media.path] == nil {
            try GeneratedMedia.ensure(media, scene: scene.path)
            decoded[media.path] = try Self.decode(media, scene: scene.path)
        }
        self.decoded = decoded
    }

    /// A new source playing `media` from its start.
    func source(for media: Scene.Media) throws(SessionError) -> any AudioSource {
        try PCMBufferSource(samples: decoded[media.path] ?? [])
    }

    /// The length of `media` in seconds.
    func duration(of media: Scene.Media) -> Double {
        Double((decoded[media.path]?.count ?? 0) / AudioFormat.standard.channels)
            / Double(AudioFormat.standard.sampleRate)
    }

    private static func decode(_ media: Scene.Media, scene: String) throws(SessionError) -> [Float] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-i", media.path, "-vn", "-f", "f32le",
            "-ar", "48000", "-ac", "2", "-",
        ]
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw SessionError(
                code: .fileError,
                message: "could not run ffmpeg to decode \(media.path): \(error); install it (Scripts/install)")
        }
        // The error pipe is read on its own thread so a chatty ffmpeg cannot block on a full pipe.
        let messages = Mutex<Data>(Data())
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            messages.withLock { $0 = data }
            done.signal()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        done.wait()
        guard process.terminationStatus == 0, !data.isEmpty else {
            let message = messages.withLock { String(decoding: $0, as: UTF8.self) }
            throw SessionError(
                code: .fileError,
                message: "\(scene):\(media.line): \(media.written) could not be decoded: "
                    + (message.isEmpty ? "it holds no audio" : message.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}
