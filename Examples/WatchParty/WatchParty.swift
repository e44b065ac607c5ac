import ArgumentParser
import Foundation
import Logging
import SharedSession

/// The package's main job: a scripted watch-party scene, on the offline engine or on a PipeWire
/// daemon, printed as a timeline and written to a WAV file a person can listen to.
@main
struct WatchParty: ParsableCommand {
    /// The engine the scene plays on.
    enum Engine: String, CaseIterable, ExpressibleByArgument {
        case offline
        case pipewire
    }

    static let configuration = CommandConfiguration(
        commandName: "watch-party",
        abstract:
            "Play a scripted watch-party scene on the offline engine or PipeWire and write the mix to a WAV file.",
        discussion: """
            A movie plays while a social-feed clip and then a voice chat share its audio session \
            through OverlayAudioBridge; another app's audio, the background, a locked screen and a \
            phone call come and go. Each session event is printed with its time in the scene, and \
            after each step the measured level of the movie's own stem.

            With --engine pipewire the scene plays in real time on the PipeWire daemon that \
            XDG_RUNTIME_DIR leads to (Scripts/pipewire-headless start), the locked screen forces the \
            graph's quantum with pw-metadata, and the mix is a pw-record recording of the \
            \(PipeWirePlayback.sink) monitor, trimmed to the scene; the movie's levels are read out of \
            that recording by frequency after the scene.
            """)

    @Option(help: "The engine that plays the scene: offline (rendered on demand, deterministic) or pipewire.")
    var engine: Engine = .offline

    @Option(help: "Where to write the mix (48 kHz stereo, 32-bit float WAV).")
    var output = "watch-party.wav"

    @Flag(help: "Print only the line naming the written file.")
    var quiet = false

    @Option(help: "Record the run's session (every input and event, JSON Lines) to this file, for --replay.")
    var record: String?

    @Option(
        help: ArgumentHelp(
            "Replay a recorded session on the offline engine instead of playing the scene, and say whether "
                + "its events and levels matched the recording."))
    var replay: String?

    func run() throws {
        if let replay {
            try ReplayReport.run(path: replay, quiet: quiet)
            return
        }
        var logger = Logger(label: "watch-party.session")
        // The timeline already tells the story; in quiet mode only the library's errors get through.
        logger.logLevel = quiet ? .error : .warning
        let playback = try makePlayback(logger: logger)
        let session = SharedSession(engine: playback.engine, policy: .default, logger: logger)
        let timeline = Timeline(playback: playback, quiet: quiet)
        // The session holds its delegate weakly; `timeline` lives until the end of run().
        session.delegate = timeline
        let offline = playback.engine as? OfflineEngine
        var recorder: SessionRecorder?
        if let record {
            // On the offline engine each input carries its frame, so the replay renders the same audio.
            var position: (@Sendable () -> Int)?
            if let offline { position = { offline.framesRendered } }
            recorder = try SessionRecorder(session: session, to: URL(fileURLWithPath: record), framePosition: position)
        }

        timeline.say("watch-party: a scripted scene on \(playback.summary)")
        timeline.say(playback.levelsNote)
        let scene = WatchPartyScene(playback: playback, session: session, timeline: timeline)
        if let recorder, let offline {
            // Where a replay checks its levels: the movie's gain after each step.
            scene.stepPlayed = { label, main in
                guard let main, let gain = offline.currentGain(of: main) else { return }
                recorder.recordLevels([main: gain], label: label)
            }
        }
        let (mix, readings) = try scene.run()
        try recorder?.stop()

        timeline.say()
        timeline.say("The movie's level through the scene:")
        for reading in readings {
            let level = LevelMeter.format(playback.mainLevel(of: reading, in: mix))
                .padding(toLength: 12, withPad: " ", startingAt: 0)
            timeline.say(String(format: "  %6.3f s  ", reading.time) + level + "  " + reading.label)
        }
        timeline.say("\(timeline.eventsSeen) session events.")

        let format = playback.engine.format
        try WAVFile.write(mix, format: format, to: output)
        let frames = mix.count / format.channels
        let bytes = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        print(
            "wrote \(output): \(frames) frames, "
                + String(format: "%.3f s", Double(frames) / Double(format.sampleRate))
                + ", \(format), \(bytes) bytes")
        if let record {
            print("wrote \(record): the session's inputs and events; replay it with --replay \(record)")
        }
    }

    private func makePlayback(logger: Logger) throws -> any ScenePlayback {
        switch engine {
        case .offline:
            return try OfflinePlayback()
        case .pipewire:
            do {
                // pw-record writes next to the output; the output itself is the trimmed scene.
                return try PipeWirePlayback(recordingTo: output + ".pw-record.wav", logger: logger)
            } catch let error as SessionError where error.code == .engineUnavailable {
                // The user asked for PipeWire: say why it is not there rather than play offline.
                FileHandle.standardError.write(Data("watch-party: \(error.message)\n".utf8))
                throw ExitCode.failure
            }
        }
    }
}
