import Foundation
import Logging
import SharedSession
import SharedSessionPipeWire
import Synchronization

/// The scene in real time on a PipeWire daemon: the graph drives the streams while the scene
/// sleeps through each step, and a `pw-record` of the sink's monitor is the scene's mix.
///
/// Levels cannot be measured per stream here (the daemon mixes the streams), so they are read out of
/// the recording after the scene by frequency: the movie's partials are apart from the overlays'.
final class PipeWirePlayback: ScenePlayback {
    /// The private daemon's null sink (Scripts/pipewire-headless), which the streams play to.
    static let sink = "sharedsession-sink"
    /// The graph's own quantum on that daemon; any other quantum the scene asks for is forced.
    private static let graphQuantum = 1024

    private struct State {
        var start: ContinuousClock.Instant?
        /// Recording frame at scene time 0.
        var startFrame = 0
        var sceneFrames = 0
        /// The `clock.force-quantum` now set; 0 lets the graph choose.
        var forcedQuantum = 0
    }

    private let pipewire: PipeWireEngine
    private let recorder: MonitorRecorder
    private let state = Mutex(State())

    /// Connects to the daemon and starts recording the sink.
    ///
    /// - Throws: ``SessionError`` with code `engineUnavailable` if no daemon can be reached, or a
    ///   ``MonitorRecorder/Failure`` if the sink cannot be recorded.
    init(recordingTo path: String, logger: Logger) throws {
        pipewire = try PipeWireEngine(applicationName: "watch-party", logger: logger)
        do {
            recorder = try MonitorRecorder(sink: Self.sink, path: path)
        } catch {
            pipewire.shutdown()
            throw error
        }
    }

    var engine: any AudioEngine { pipewire }

    var now: Double {
        guard let start = state.withLock({ $0.start }) else { return 0 }
        let elapsed = (ContinuousClock.now - start).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
    }

    var summary: String { "PipeWire in real time (sink \(Self.sink), \(pipewire.format))" }

    var levelsNote: String {
        "levels: measured after the scene in the recording of the sink's monitor, over the last 100 ms of each step: "
            + "the movie's 220 + 330 Hz partials alone (Goertzel), RMS in dB re full scale; at gain 1 it reads -6.0 dBFS"
    }

    func begin() throws {
        // Scene time 0 is a cycle boundary in the recording: right after the recorder wrote a cycle,
        // the file's length is the recording's position, to within the poll (0.2 ms).
        let frames = try recorder.framesAtNextWrite()
        state.withLock {
            $0.startFrame = frames
            $0.start = .now
        }
    }

    func play(quanta: Int, quantum: Int, mainStream: StreamID?, timeline: Timeline, drainInput: () -> Void) throws
        -> (main: Double?, mix: Double?)?
    {
        force(quantum: quantum == Self.graphQuantum ? 0 : quantum, timeline: timeline)
        let (start, end) = state.withLock { state in
            state.sceneFrames += quanta * quantum
            return (state.start ?? .now, state.sceneFrames)
        }
        // Sleep to the step's planned end from the scene's start, so time spent in the scene's own
        // calls (a subprocess, a stream opening) never accumulates into drift.
        let deadline = start + .microseconds(Int64(end) * 1_000_000 / Int64(pipewire.format.sampleRate))
        while true {
            drainInput()
            let remaining = deadline - .now
            guard remaining > .zero else { break }
            // Short naps: the capture ring is drained well within a quantum.
            Thread.sleep(forTimeInterval: min(0.005, Double(remaining.components.attoseconds) * 1e-18))
        }
        return nil
    }

    func finish(timeline: Timeline) throws -> [Float] {
        force(quantum: 0, timeline: timeline)
        // The last cycles reach the monitor, and the recorder's file, a little after the scene ends.
        Thread.sleep(forTimeInterval: 0.3)
        pipewire.shutdown()
        let recording = try recorder.stop()
        try? FileManager.default.removeItem(atPath: recorder.path)
        let (startFrame, sceneFrames) = state.withLock { ($0.startFrame, $0.sceneFrames) }
        let channels = pipewire.format.channels
        let lower = min(startFrame * channels, recording.count)
        let upper = min((startFrame + sceneFrames) * channels, recording.count)
        let scene = Array(recording[lower..<upper])
        let rate = Double(pipewire.format.sampleRate)
        let firstSound = scene.firstIndex { $0 != 0 }.map {
            String(format: "+%.1f ms", Double($0 / channels) / rate * 1000)
        }
        timeline.note(
            "recording: \(recording.count / channels) frames from pw-record; scene 0.000 s is frame \(startFrame), "
                + "where it stood when the scene started; first sound at \(firstSound ?? "never")")
        if scene.count < sceneFrames * channels {
            timeline.note("the recording ends \(sceneFrames - scene.count / channels) frames before the scene did")
        }
        return scene
    }

    func mainLevel(of reading: WatchPartyScene.Reading, in mix: [Float]) -> Double? {
        let format = pipewire.format
        return LevelMeter.toneRMSDBFS(
            of: mix, frequencies: Soundtrack.movieFrequencies,
            endFrame: Int((reading.time * Double(format.sampleRate)).rounded()), milliseconds: 100,
            sampleRate: format.sampleRate, channels: format.channels)
    }

    /// Sets `clock.force-quantum` on the daemon with pw-metadata, as the platform would raise the
    /// quantum for a locked screen. A failure is told in the timeline and the scene goes on at the
    /// graph's quantum.
    private func force(quantum: Int, timeline: Timeline) {
        guard state.withLock({ $0.forcedQuantum }) != quantum else { return }
        let arguments = ["pw-metadata", "-n", "settings", "0", "clock.force-quantum", "\(quantum)"]
        let command = arguments.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                timeline.note("FAILED: \(command) exited with status \(process.terminationStatus); going on")
                return
            }
        } catch {
            timeline.note("FAILED: \(command) did not start (\(error)); going on")
            return
        }
        state.withLock { $0.forcedQuantum = quantum }
        timeline.note(
            quantum == 0 ? "the graph chooses its quantum again: \(command)" : "quantum forced: \(command)")
    }
}
