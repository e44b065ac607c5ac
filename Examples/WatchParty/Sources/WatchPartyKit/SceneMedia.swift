import Foundation
public import SharedSession
import SharedSessionMedia

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
        // The same fifth, loud for 9 s, 8 dB quieter for 8 s (a dialogue scene), loud again: each change
        // over 50 ms. The loudness-duck scene plays it under one voice chat.
        "movie-loud-quiet.mp4": Recipe(
            seconds: 30, channels: "stereo",
            expression: "(0.25*sin(2*PI*220*t)+0.25*sin(2*PI*330*t))"
                + "*(0.4+0.6*clip((abs(t-13)-4)/0.05\\,0\\,1))",
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
        // The pid and a random suffix: several runs, or several tests of one process, may make media at once.
        let partial = (folder as NSString).appendingPathComponent(
            ".partial-\(getpid())-\(UInt32.random(in: 0...UInt32.max))-" + name)
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

/// Opens the scene's media as `MediaFileSource`s (SharedSessionMedia): each file's audio track is
/// decoded by FFmpeg on a thread of the source's own, ahead of the engine, into a ring of
/// `MediaFileSource.defaultBufferFrames` frames that the render side reads without locks.
final class MediaLibrary: Sendable {
    /// What each file turned out to be, and how long it is, from opening it once up front.
    private let probed: [String: (info: MediaInfo, seconds: Double)]
    private let scene: String
    private let onEvent: @Sendable (String, MediaEvent) -> Void

    /// Makes any missing generated media and opens every file the scene plays once, so a file that
    /// is not media is reported before the scene starts, with the scene line that names it.
    /// `onEvent` receives each source's events (underruns, decoding errors, the end) with its stream name.
    init(scene: Scene, onEvent: @escaping @Sendable (String, MediaEvent) -> Void) throws(SessionError) {
        self.scene = scene.path
        self.onEvent = onEvent
        var probed: [String: (info: MediaInfo, seconds: Double)] = [:]
        for media in scene.media where probed[media.path] == nil {
            try GeneratedMedia.ensure(media, scene: scene.path)
            let source = try Self.open(media, scene: scene.path)
            let seconds = source.duration.map {
                Double($0.components.seconds) + Double($0.components.attoseconds) * 1e-18
            }
            probed[media.path] = (source.info, seconds ?? 0)
        }
        self.probed = probed
    }

    /// A new source playing `media` from its start, its events reported under `name`.
    func source(for media: Scene.Media, name: String) throws(SessionError) -> MediaFileSource {
        let source = try Self.open(media, scene: scene)
        let onEvent = self.onEvent
        source.eventHandler = { onEvent(name, $0) }
        return source
    }

    /// The length of `media` in seconds, as its container says.
    func duration(of media: Scene.Media) -> Double { probed[media.path]?.seconds ?? 0 }

    /// What `media` is: codec, container, rate and layout.
    func info(of media: Scene.Media) -> MediaInfo? { probed[media.path]?.info }

    private static func open(_ media: Scene.Media, scene: String) throws(SessionError) -> MediaFileSource {
        do {
            return try MediaFileSource(path: media.path, startsPlaying: true)
        } catch {
            throw SessionError(code: error.code, message: "\(scene):\(media.line): \(error.message)")
        }
    }
}
