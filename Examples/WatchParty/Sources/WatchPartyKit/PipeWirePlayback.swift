import Foundation
import Logging
import SharedSession
import SharedSessionPipeWire
import Synchronization

/// The scene in real time on a PipeWire daemon: the graph drives the streams while the scene
/// sleeps through each step, and a `pw-record` of the sink's monitor is the scene's mix.
///
/// Levels cannot be measured per stream here (the daemon mixes the streams), so they are read out of
/// the recording after the scene by frequency: each stream's partials are apart from the others'.
final class PipeWirePlayback: ScenePlayback {
    /// The private daemon's null sink (Scripts/pipewire-headless), which the streams play to.
    static let sink = "sharedsession-sink"
    /// The graph's own quantum on that daemon; any other quantum the scene asks for is forced.
    private static let graphQuantum = 1024

    private struct State {
        /// Where the recorder's writes and the scene's clock are measured from.
        var origin = ContinuousClock.now
        var start: ContinuousClock.Instant?
        /// Recording frame at scene time 0.
        var startFrame = 0
        var sceneFrames = 0
        /// Frames in the recording at the last poll.
        var framesWritten = 0
        /// Since the last step ended, for each write seen: when (seconds from `origin`) and the
        /// recording's lag, the wall clock in frames minus the frame the write began with.
        var writes: [(time: Double, lag: Double)] = []
        /// The lag at scene time 0, and at the last step's end.
        var startLag: Double = 0
        var lag: Double = 0
        /// Recording frame at each step's end, by the scene frame it ends at.
        var stepEnds: [Int: Int] = [:]
        /// Steps in which the recording lost (or gained) more than the jitter: scene frames and frames lost.
        var gaps: [(steps: Range<Int>, frames: Int)] = []
        /// The `clock.force-quantum` now set; 0 lets the graph choose.
        var forcedQuantum = 0
    }

    private let pipewire: PipeWireEngine
    private let recorder: MonitorRecorder
    private let state = Mutex(State())
    /// Where the playback's own remarks go (the live view's log).
    private let note: @Sendable (String) -> Void

    /// Connects to the daemon and starts recording the sink.
    ///
    /// - Throws: ``SessionError`` with code `engineUnavailable` if no daemon can be reached, or a
    ///   ``MonitorRecorder/Failure`` if the sink cannot be recorded.
    init(recordingTo path: String, logger: Logger, note: @escaping @Sendable (String) -> Void) throws {
        self.note = note
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
        return Self.seconds(ContinuousClock.now - start)
    }

    var summary: String { "PipeWire in real time (sink \(Self.sink), \(pipewire.format))" }

    func begin() throws {
        // Scene time 0 is placed in the recording by the recorder's writes during the lead-in.
        _ = try recorder.framesAtNextWrite()
        state.withLock { $0.framesWritten = recorder.framesWritten }
        let lead = ContinuousClock.now + Self.lagWindow
        while ContinuousClock.now < lead {
            pollWrites()
            Thread.sleep(forTimeInterval: 0.0002)
        }
        let now = ContinuousClock.now
        let rate = Double(pipewire.format.sampleRate)
        try state.withLock { state throws(MonitorRecorder.Failure) in
            guard let lag = Self.lag(of: state.writes, endingAt: Self.seconds(now - state.origin)) else {
                throw MonitorRecorder.Failure(description: "pw-record wrote nothing for \(Self.lagWindow)")
            }
            state.start = now
            state.startLag = lag
            state.lag = lag
            state.startFrame = Int((Self.seconds(now - state.origin) * rate - lag).rounded())
            state.writes = []
        }
    }

    func play(quanta: Int, quantum: Int, quantumDone: (RenderedAudio?) -> Void) throws {
        force(quantum: quantum == Self.graphQuantum ? 0 : quantum)
        let (start, end) = state.withLock { state in
            state.sceneFrames += quanta * quantum
            return (state.start ?? .now, state.sceneFrames)
        }
        let rate = Double(pipewire.format.sampleRate)
        // Sleep to the step's planned end from the scene's start, so time spent in the scene's own
        // calls (a subprocess, a stream opening) never accumulates into drift.
        let deadline = start + .microseconds(Int64(end) * 1_000_000 / Int64(rate))
        while true {
            quantumDone(nil)
            pollWrites()
            let remaining = deadline - .now
            guard remaining > .zero else { break }
            // Millisecond naps: the writes are timed to a millisecond, and the capture ring is
            // drained well within a quantum.
            Thread.sleep(forTimeInterval: min(0.001, Self.seconds(remaining)))
        }
        // The recording can lose frames (it lost 3072 where the quantum fell back from 4096 to
        // 1024), so its length since the start does not say where a step ends in it; the lag
        // measured just before the step's end does.
        let (lost, newlyLost) = state.withLock { state in
            let endTime = Self.seconds(deadline - state.origin)
            let lag = Self.lag(of: state.writes, endingAt: endTime) ?? state.lag
            state.stepEnds[end] = Int((endTime * rate - lag).rounded())
            state.writes = []
            defer { state.lag = lag }
            return (Int((lag - state.startLag).rounded()), Int((lag - state.lag).rounded()))
        }
        // Beyond a graph quantum and 10 ms: less is the jitter of timing the writes (with a cue every
        // half second, steps read ±1 quantum back and forth that cancel out over the scene).
        if abs(newlyLost) > Self.graphQuantum + Int(rate) / 100 {
            state.withLock { $0.gaps.append((end - quanta * quantum..<end, newlyLost)) }
            note(
                String(
                    format: "the recording %@ %d frames (%.1f ms) during this step, %d in all; "
                        + "the levels are placed in it by its writes",
                    newlyLost > 0 ? "lost" : "gained", abs(newlyLost), Double(abs(newlyLost)) * 1000 / rate, lost))
        }
    }

    func finish(log: (String) -> Void) throws -> [Float] {
        force(quantum: 0)
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
        log(
            "recording: \(recording.count / channels) frames from pw-record; scene 0.000 s is frame \(startFrame), "
                + "where it stood when the scene started; first sound at \(firstSound ?? "never")")
        if scene.count < sceneFrames * channels {
            log("the recording ends \(sceneFrames - scene.count / channels) frames before the scene did")
        }
        return scene
    }

    func recordingGap(inSceneFrames frames: Range<Int>) -> Int {
        state.withLock { state in
            state.gaps.filter { $0.steps.overlaps(frames) }.reduce(0) { $0 + abs($1.frames) }
        }
    }

    func mixFrame(ofSceneFrame frame: Int) -> Int {
        // The nearest step end places the frame (a mark just before a cue is placed by that cue's step
        // end, measured from the writes just before it); between the two the recording ran at the rate.
        state.withLock { state in
            guard let end = state.stepEnds.keys.min(by: { abs($0 - frame) < abs($1 - frame) }),
                let recorded = state.stepEnds[end]
            else { return frame }
            return recorded - state.startFrame + (frame - end)
        }
    }

    /// How long before a point in time the writes that place it are taken from: a few cycles even
    /// at a 4096-frame quantum, short enough that a loss earlier in the step does not count.
    private static let lagWindow = Duration.milliseconds(250)

    /// Notes a write by the recorder since the last poll. A write comes a little after the cycle
    /// that made it (at once, or later if pw-record was kept waiting), so the smallest lag over a
    /// few writes is the recording's position against the wall clock.
    private func pollWrites() {
        let written = recorder.framesWritten
        let now = ContinuousClock.now
        let rate = Double(pipewire.format.sampleRate)
        state.withLock { state in
            guard written != state.framesWritten else { return }
            let time = Self.seconds(now - state.origin)
            state.writes.append((time, time * rate - Double(state.framesWritten)))
            state.framesWritten = written
        }
    }

    /// The smallest lag of the writes in the ``lagWindow`` before `time`, or of all of them.
    private static func lag(of writes: [(time: Double, lag: Double)], endingAt time: Double) -> Double? {
        let window = seconds(lagWindow)
        let recent = writes.filter { $0.time >= time - window }
        return (recent.isEmpty ? writes : recent).map(\.lag).min()
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// Sets `clock.force-quantum` on the daemon with pw-metadata, as the platform would raise the
    /// quantum for a locked screen. A failure is told in the timeline and the scene goes on at the
    /// graph's quantum.
    private func force(quantum: Int) {
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
                note("FAILED: \(command) exited with status \(process.terminationStatus); going on")
                return
            }
        } catch {
            note("FAILED: \(command) did not start (\(error)); going on")
            return
        }
        state.withLock { $0.forcedQuantum = quantum }
        note(
            quantum == 0 ? "the graph chooses its quantum again: \(command)" : "quantum forced: \(command)")
    }
}
