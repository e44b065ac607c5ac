import ArgumentParser
import Foundation
import Logging
import SharedSession
import WatchPartyKit

/// The package's main job: a watch-party scene read from a file, played on the offline engine or a
/// PipeWire daemon while a live view shows it, then written as a WAV of the mix and a plot of the levels.
@main
struct WatchParty: ParsableCommand {
    /// The engine the scene plays on.
    enum Engine: String, CaseIterable, ExpressibleByArgument {
        case offline
        case pipewire
    }

    static let configuration = CommandConfiguration(
        commandName: "watch-party",
        abstract: "Play a watch-party scene file through SharedSession; write the mix (WAV) and a plot (PNG, SVG).",
        discussion: """
            A scene file (JSON) says what happens when: the movie, a social-feed clip that ducks it, a \
            voice chat joining and leaving, a notification, another app's audio, the background, a \
            locked screen, an interruption, a route change, the host's volume, seeks and pauses. Its \
            media are made with ffmpeg the first time a scene asks for them and played through \
            SharedSessionMedia's MediaFileSource. While it plays, a live view shows a meter per \
            stream, the session's state and its events (plain lines when the output is not a \
            terminal). Afterwards the levels are read at the scene's marks and checked against what \
            the scene expects.

            Exit status: 2 when the scene file cannot be read (its line and field are named), or when \
            --output or --record names a file that cannot be written (checked before playing); 1 when \
            the scene cannot be played or a level is off by more than 0.1 dB offline (0.5 dB on \
            PipeWire).

            With --engine pipewire the scene plays in real time on the PipeWire daemon that \
            XDG_RUNTIME_DIR leads to (Scripts/pipewire-headless start); the mix is a recording of \
            the sink's monitor, and each stream's level is read out of it by its partials.
            """)

    @Option(help: "The scene file to play.")
    var scene = WatchParty.defaultScene

    @Option(help: "The engine that plays the scene: offline (faster than real time, deterministic) or pipewire.")
    var engine: Engine = .offline

    @Option(help: "Where to write the mix (48 kHz stereo, 32-bit float WAV); the plot goes beside it (.png, .svg).")
    var output = "watch-party.wav"

    @Flag(help: "Print only the lines naming the written files and the check of the marks.")
    var quiet = false

    @Flag(help: "Plain lines even on a terminal.")
    var plain = false

    @Option(help: "Record the run's session (every input and event, JSON Lines) to this file, for --replay.")
    var record: String?

    @Option(
        help: ArgumentHelp(
            "Replay a recorded session on the offline engine instead of playing a scene, and say whether "
                + "its events and levels matched the recording."))
    var replay: String?

    func run() throws {
        if let replay {
            let report: ReplayCheck.Report
            do {
                report = try ReplayCheck.run(path: replay)
            } catch {
                FileHandle.standardError.write(Data("watch-party: \(error.message)\n".utf8))
                throw ExitCode(2)
            }
            for line in report.lines { print(line) }
            if !report.matched {
                FileHandle.standardError.write(Data("watch-party: the replay differs from the recording\n".utf8))
                throw ExitCode.failure
            }
            return
        }
        var logger = Logger(label: "watch-party.session")
        logger.logLevel = .error
        let view = LiveView(style: quiet ? .quiet : plain ? .lines : nil)
        let loaded: Scene
        do {
            loaded = try Scene.load(path: scene)
        } catch {
            FileHandle.standardError.write(Data("watch-party: \(error)\n".utf8))
            throw ExitCode(2)
        }
        // The files are written after the scene has played: a path that cannot take them fails now.
        do {
            try OutputFile.check(output, option: "--output")
            if let record { try OutputFile.check(record, option: "--record") }
        } catch {
            FileHandle.standardError.write(Data("watch-party: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let choice: SceneRunner.Engine =
            engine == .offline ? .offline : .pipewire(recordingTo: output + ".pw-record.wav")
        let run: SceneRun
        do {
            run = try SceneRunner(scene: loaded, engine: choice, view: view, logger: logger, recordingTo: record).run()
        } catch let error as SessionError {
            FileHandle.standardError.write(Data("watch-party: \(error.message)\n".utf8))
            throw ExitCode.failure
        }

        view.say("")
        view.say(
            String(
                format: "played %.1f s of scene in %.2f s of wall-clock time (%.1f× real time)", run.duration,
                run.renderSeconds, run.duration / max(run.renderSeconds, 1e-9)))
        var failures = 0
        for line in MarkCheck.lines(for: run, tolerance: engine == .offline ? 0.1 : 0.5, failures: &failures) {
            view.result(line)
        }

        // Absolute, so the paths printed below can be opened from anywhere.
        let wav = URL(fileURLWithPath: output).standardizedFileURL
        let base = wav.deletingPathExtension().path
        let png = base + ".png"
        let svg = base + ".svg"
        do {
            try WAVFile.write(run.mix, format: .standard, to: wav.path)
            try LevelPlot.write(run, png: png, svg: svg)
        } catch {
            FileHandle.standardError.write(Data("watch-party: \(error.message)\n".utf8))
            throw ExitCode.failure
        }
        view.result("wrote \(wav.path): the mix, " + String(format: "%.1f s", run.duration))
        view.result("wrote \(png) and \(svg): each stream's level over time, the cues marked")
        if let record {
            view.result("wrote \(record): the session's inputs and events; replay it with --replay \(record)")
        }
        if failures > 0 {
            FileHandle.standardError.write(Data("watch-party: \(failures) level(s) off at the scene's marks\n".utf8))
            throw ExitCode.failure
        }
    }

    /// The scene that ships with the example: beside the working directory's checkout, or this source's.
    static var defaultScene: String {
        let relative = "Examples/WatchParty/Scenes/default.json"
        if FileManager.default.fileExists(atPath: relative) { return relative }
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return sources.deletingLastPathComponent().appendingPathComponent("Scenes/default.json").path
    }
}
