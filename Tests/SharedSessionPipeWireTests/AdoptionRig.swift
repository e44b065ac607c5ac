import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTesting
import Testing

/// A ``SessionRig`` with a ``NodeAdoption`` and its events, and the foreign players the adoption
/// tests run in other processes.
final class AdoptionRig {
    let rig: SessionRig
    let adoption: NodeAdoption
    let log = EventLog<AdoptionEvent>()
    private var players: [Daemon.Child] = []

    init(policy: SessionPolicy = .default, carrier: AdoptionCarrier = .automatic) throws {
        rig = try SessionRig(policy: policy, adoptionCarrier: carrier)
        adoption = try NodeAdoption(session: rig.session, engine: rig.engine)
        adoption.setEventHandler { [log] event in log.append(event) }
    }

    var session: SharedSession { rig.session }
    var recorder: SinkRecorder { rig.recorder }

    /// Waits for an adoption event matching `predicate`, recording meanwhile; fails the test after
    /// `timeout`.
    @discardableResult
    func wait(
        _ what: String, timeout: Duration = .seconds(5), after index: Int = 0,
        for predicate: @escaping @Sendable (AdoptionEvent) -> Bool
    ) async throws -> AdoptionEvent {
        let end = ContinuousClock.now + timeout
        repeat {
            if let event = await log.wait(timeout: .milliseconds(50), after: index, for: predicate) { return event }
            recorder.poll()
        } while ContinuousClock.now < end
        Issue.record("no adoption event \(what) within \(timeout); events: \(log.all)")
        throw CancellationError()
    }

    /// Starts GStreamer playing a `frequency` sine at `amplitude` through `sink`, live (in real time, as a
    /// player does), in a process of its own. `pipewiresink` (the default) is PipeWire's own element;
    /// `pulsesink`, through PipeWire's PulseAudio server, is what a desktop GStreamer player picks, and
    /// the one to use when the test changes the graph's quantum: `pipewiresink` (0.3.65) can stall on
    /// the renegotiation, its node running, linked and silent (see the watch-party's GStreamer movie).
    func startGStreamer(
        frequency: Double = mainTone, amplitude: Double = 0.5, seconds: Double? = nil, sink: String = "pipewiresink"
    ) throws -> Daemon.Child {
        // Not live: pipewiresink's clock paces it, and it fills the stream's buffers as the graph takes
        // them (a live source drifting against the graph's clock underruns more on a loaded machine).
        var source = ["audiotestsrc", "freq=\(frequency)", "volume=\(amplitude)", "is-live=false"]
        source.append("samplesperbuffer=1024")
        if let seconds { source.append("num-buffers=\(Int(seconds * 48_000 / 1024))") }
        let child = try Daemon.launch(
            "gst-launch-1.0",
            ["-q"] + source + ["!", "audio/x-raw,format=F32LE,rate=48000,channels=2", "!", sink])
        players.append(child)
        return child
    }

    /// Starts GStreamer playing the main tone, adopts its node as the session's main stream (by its
    /// process id), and waits until the node is adopted and its tone is heard at full level: the setup
    /// the adoption tests share; `sink` as ``startGStreamer(frequency:amplitude:seconds:sink:)``. Returns the stream (close it to give the node back), the node's id and
    /// the player.
    func adoptGStreamerMain(sink: String = "pipewiresink") async throws
        -> (main: StreamHandle, node: UInt32, player: Daemon.Child)
    {
        let gst = try startGStreamer(sink: sink)
        let main = try adoption.adoptMain(AdoptionRule(.processID(gst.pid, includingChildren: false)))
        do {
            let adopted = try await wait("main adopted") { if case .adopted = $0 { true } else { false } }
            guard case .adopted(_, let node, _, _) = adopted else { throw CancellationError() }
            try await recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            return (main, node, gst)
        } catch {
            main.close()
            throw error
        }
    }

    /// Starts `pw-play` playing `file`.
    func startPwPlay(_ file: String) throws -> Daemon.Child {
        let child = try Daemon.launch("pw-play", [file])
        players.append(child)
        return child
    }

    /// Starts mpv playing `file` with its PipeWire output, no video, no terminal; with `ipc`, its JSON IPC
    /// server on that socket (see ``MpvIPC``).
    func startMpv(_ file: String, ipc: String? = nil) throws -> Daemon.Child {
        let child = try Daemon.launch(
            "mpv",
            ["--no-config", "--no-video", "--no-terminal", "--ao=pipewire", "--loop-file=inf"]
                + (ipc.map { ["--input-ipc-server=\($0)"] } ?? []) + [file])
        players.append(child)
        return child
    }

    /// Ends a player (SIGKILL: a player that goes away) and waits for it.
    func end(_ child: Daemon.Child) {
        kill(child.pid, SIGKILL)
        child.waitUntilExit()
        players.removeAll { $0.pid == child.pid }
    }

    /// The largest change of the `frequency` tone's level between two consecutive windows of `frames`
    /// frames in `range` of the recording (dB). 256 frames divide the quantum, so PipeWire's steps fall
    /// on window boundaries; with another tone in the mix that is not a whole number of cycles in the
    /// window (the 3 kHz overlay is), the other tone leaks into the level, so measure with it silent. Windows holding a dropout (a cycle the loaded machine
    /// lost: 16 or more samples of exact silence, which a tone above -90 dBFS never has) are left out,
    /// with the comparisons they are part of. Throws when fewer than half the comparisons are left: a
    /// step measured over a recording that was mostly dropouts (or silence) would read 0 and pass.
    func largestStep(_ frequency: Double, in range: Range<Int>, frames: Int = 256) throws -> Double {
        let samples = recorder.samples
        var levels: [Double?] = []
        var start = range.lowerBound
        while start + frames <= min(range.upperBound, samples.count / 2) {
            var run = 0
            var dropout = false
            for frame in start..<(start + frames) {
                run = samples[2 * frame] == 0 ? run + 1 : 0
                if run >= 16 { dropout = true }
            }
            levels.append(
                dropout ? nil : try meter.toneLevel(samples, frequency: frequency, frames: window(start, frames)))
            start += frames
        }
        var largest = 0.0
        var compared = 0
        for (a, b) in zip(levels, levels.dropFirst()) {
            guard let a, let b else { continue }
            largest = max(largest, abs(b - a))
            compared += 1
        }
        let possible = max(levels.count - 1, 0)
        guard compared >= Self.minimumComparisons, 2 * compared >= possible else {
            throw MeasurementError(
                code: .noAudio,
                message: "only \(compared) of \(possible) window pairs in frames \(range) were free of dropouts: the "
                    + "largest step cannot be read from them; record again on a quieter machine")
        }
        return largest
    }

    /// The fewest window pairs a step is read from (20: 107 ms of 256-frame windows).
    static let minimumComparisons = 20

    func stop() {
        for child in players { end(child) }
        log.stop()
        rig.stop()
    }
}

/// mpv's JSON IPC (`--input-ipc-server`): one request per connection, its answer read back.
enum MpvIPC {
    /// A numeric property (`ao-volume`, `volume`).
    static func property(_ name: String, at socket: String) throws -> Double {
        let answer = try request(#"{ "command": ["get_property", "\#(name)"] }"#, at: socket)
        let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
        guard let value = object?["data"] as? Double else {
            throw SessionError(code: .invalidValue, message: "mpv answered \(answer) for \(name)")
        }
        return value
    }

    static func set(_ name: String, _ value: Double, at socket: String) throws {
        let answer = try request(#"{ "command": ["set_property", "\#(name)", \#(value)] }"#, at: socket)
        guard answer.contains(#""error":"success""#) else {
            throw SessionError(code: .invalidValue, message: "mpv answered \(answer) to setting \(name)")
        }
    }

    /// Sends one line and returns the first line mpv answers, waiting up to 5 s for its socket.
    static func request(_ line: String, at path: String) throws -> String {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if connected == 0 {
                let bytes = Array((line + "\n").utf8)
                _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                var answer: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !answer.contains(10) {
                    let count = read(fd, &buffer, buffer.count)
                    guard count > 0 else { break }
                    answer += buffer[0..<count]
                }
                // mpv may send an event line first: the answer is the line with a request_id.
                let lines = String(decoding: answer, as: UTF8.self).split(separator: "\n")
                return String(lines.first { $0.contains("request_id") } ?? lines.first ?? "")
            }
            guard ContinuousClock.now < deadline else {
                throw SessionError(code: .connectionLost, message: "mpv's IPC socket \(path) did not answer")
            }
            usleep(20_000)
        }
    }
}

/// A WAV file of a `frequency` sine at `amplitude`, `seconds` long, in the temporary directory. Written
/// under a name of this process's and renamed into place: CI runs the suites on two daemons at once,
/// and a player of one process must never open the file while the other is writing it.
func toneFile(_ frequency: Double, amplitude: Float, seconds: Double) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
        "sharedsession-adoption-\(Int(frequency))-\(seconds).wav"
    ).path
    let frames = Int(seconds * 48_000)
    var samples = [Float](repeating: 0, count: frames * 2)
    for frame in 0..<frames {
        let value = amplitude * Float(sin(2 * Double.pi * frequency * Double(frame) / 48_000))
        samples[2 * frame] = value
        samples[2 * frame + 1] = value
    }
    let written = "\(path).\(getpid())"
    try WAVFile.write(samples, to: written)
    guard rename(written, path) == 0 else {
        unlink(written)
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    return path
}
