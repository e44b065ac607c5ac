import Foundation
import SharedSession
import SharedSessionPipeWire
import Synchronization

/// `gst-launch-1.0` playing the scene's movie in a process of its own, what it printed kept to say why
/// when its node does not come.
///
/// `pulsesink` through PipeWire's PulseAudio server is what a GStreamer player on a desktop plays
/// through (`autoaudiosink` picks it: its rank is primary, `pipewiresink`'s none). `pipewiresink`
/// (0.3.65) stalls when the screen lock forces a 4096-frame quantum: with no session anywhere,
/// `gst-launch` alone played the locked part with dips to -16...-22 dB (100 ms windows) in 2 of 4
/// runs, and its streaming thread was seen waiting for ever for a buffer PipeWire never gave back,
/// its node running and linked and silent. `pulsesink` played 4 of 4 such runs without a dip.
final class GStreamerPlayer {
    let process = Process()
    let started: ContinuousClock.Instant
    /// What `gst-launch` wrote to its standard error, read as it comes.
    private let output = OutputTail(limit: 4096)

    init(file: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gst-launch-1.0")
        // MP4 with AAC (the scene's movie): `decodebin` on Debian 12 picks a decoder that plays this file's
        // AAC at the wrong pitch (220 Hz comes out near 455 Hz), libav's does not.
        process.arguments = [
            "-q", "filesrc", "location=\(file)", "!", "qtdemux", "!", "avdec_aac", "!", "audioconvert",
            "!", "audioresample", "!", "audio/x-raw,format=F32LE,layout=interleaved,rate=48000,channels=2", "!",
            "pulsesink",
        ]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        let output = self.output
        errors.fileHandleForReading.readabilityHandler = { handle in
            let bytes = handle.availableData
            if bytes.isEmpty { handle.readabilityHandler = nil } else { output.append(bytes) }
        }
        started = .now
        do {
            try process.run()
        } catch {
            throw SessionError(
                code: .engineUnavailable,
                message: "cannot start gst-launch-1.0 for the movie (\(error)): Scripts/pipewire-headless install "
                    + "installs GStreamer and its PulseAudio plugin")
        }
    }

    /// Why no node came in the `waited` since `gst-launch` started: whether it exited, and what it printed.
    func missingNode(after waited: Duration) -> SessionError {
        let printed = output.text.split(separator: "\n").suffix(8).joined(separator: " | ")
        let state =
            process.isRunning
            ? "gst-launch-1.0 (process \(process.processIdentifier)) is still running"
            : "gst-launch-1.0 exited with status \(process.terminationStatus)"
        return SessionError(
            code: .engineUnavailable,
            message:
                "GStreamer's node for the movie did not appear in the \(waited) after gst-launch-1.0 started: \(state); it printed "
                + (printed.isEmpty ? "nothing" : "\"\(printed)\"")
                + " (its PulseAudio client reaches the daemon through pipewire-pulse at $XDG_RUNTIME_DIR/pulse/native)")
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// The last `limit` bytes a process wrote, shared with the handler that reads them.
private final class OutputTail: Sendable {
    let limit: Int
    private let bytes = Mutex<[UInt8]>([])

    init(limit: Int) { self.limit = limit }

    func append(_ data: Data) {
        bytes.withLock { kept in
            kept.append(contentsOf: data)
            if kept.count > limit { kept.removeFirst(kept.count - limit) }
        }
    }

    var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
}

extension RunState {
    /// How long the movie's node may take to appear. `gst-launch` makes it 0.1–0.3 s after it starts on
    /// this machine; a player that has made none in this time has failed to start, and the scene says why.
    static let gstreamerStartLimit: Duration = .seconds(5)

    /// The movie played by `gst-launch-1.0 … ! pulsesink` (``GStreamerPlayer``), its node adopted as the
    /// session's main stream by the player's process id: the session's volume, ducks and pauses reach
    /// the node's `Props`. Waits until the node is a member of the session.
    func openGStreamerMovie() throws {
        guard let engine = playback.engine as? PipeWireEngine else {
            throw SessionError(code: .invalidConfiguration, message: "the GStreamer movie needs the PipeWire engine")
        }
        let player = try GStreamerPlayer(file: scene.movie.path)
        gstreamer = player
        let adoption = try NodeAdoption(session: session, engine: engine)
        let adopted = Mutex(false)
        let view = self.view
        adoption.setEventHandler { event in
            view.note("movie (GStreamer): \(event)")
            switch event {
            case .adopted: adopted.withLock { $0 = true }
            case .pauseRequested(_, let paused):
                // gst-launch takes no commands: a real host would pause its pipeline here. Its node is
                // faded out to silence meanwhile, so the movie runs on unheard.
                view.note("host: \(paused ? "pause" : "resume") the GStreamer player (gst-launch runs on, silent)")
            default: break
            }
        }
        self.adoption = adoption
        let handle = try adoption.adoptMain(
            AdoptionRule(.processID(player.process.processIdentifier, includingChildren: true)), name: "movie")
        names[handle.id] = "movie"
        movie = handle
        let deadline = player.started + Self.gstreamerStartLimit
        while !adopted.withLock({ $0 }), player.process.isRunning, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        guard adopted.withLock({ $0 }) else { throw player.missingNode(after: ContinuousClock.now - player.started) }
        view.note(
            "movie (GStreamer): its node was adopted \(ContinuousClock.now - player.started) after gst-launch-1.0 started"
        )
    }
}
