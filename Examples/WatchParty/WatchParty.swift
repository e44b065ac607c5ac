import ArgumentParser
import Foundation
import Logging
import SharedSession

/// The package's main job: a scripted watch-party scene on the offline engine, printed as a
/// timeline and written to a WAV file a person can listen to.
@main
struct WatchParty: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch-party",
        abstract: "Render a scripted watch-party scene on the offline engine and write the mix to a WAV file.",
        discussion: """
            A movie plays while a social-feed clip and then a voice chat share its audio session \
            through OverlayAudioBridge; another app's audio, the background, a locked screen and a \
            phone call come and go. Each session event is printed with its time in the scene, and \
            after each step the measured level of the movie's own stem.
            """)

    @Option(help: "Where to write the mix (48 kHz stereo, 32-bit float WAV).")
    var output = "watch-party.wav"

    @Flag(help: "Print only the line naming the written file.")
    var quiet = false

    func run() throws {
        var logger = Logger(label: "watch-party.session")
        // The timeline already tells the story; in quiet mode only the library's errors get through.
        logger.logLevel = quiet ? .error : .warning
        let engine = OfflineEngine(input: try Soundtrack.microphone())
        let session = SharedSession(engine: engine, policy: .default, logger: logger)
        let timeline = Timeline(engine: engine, quiet: quiet)
        // The session holds its delegate weakly; `timeline` lives until the end of run().
        session.delegate = timeline

        timeline.say("watch-party: a scripted scene on the offline engine (\(engine.format))")
        timeline.say("levels: RMS of the last 100 ms, dB re full scale; the movie at gain 1 reads -6.0 dBFS")
        let (mix, readings) = try WatchPartyScene(engine: engine, session: session, timeline: timeline).run()

        timeline.say()
        timeline.say("The movie's level through the scene:")
        for reading in readings {
            let level = LevelMeter.format(reading.mainLevel).padding(toLength: 12, withPad: " ", startingAt: 0)
            timeline.say(String(format: "  %6.3f s  ", reading.time) + level + "  " + reading.label)
        }
        timeline.say("\(timeline.eventsSeen) session events.")

        try WAVFile.write(mix, format: engine.format, to: output)
        let frames = mix.count / engine.format.channels
        let bytes = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        print(
            "wrote \(output): \(frames) frames, "
                + String(format: "%.3f s", Double(frames) / Double(engine.format.sampleRate))
                + ", \(engine.format), \(bytes) bytes")
    }
}
