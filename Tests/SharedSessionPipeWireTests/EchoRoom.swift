import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// A simulated room on the private daemon, for measuring echo cancellation: the session plays a movie
/// on the default sink; the "room" (an engine of its own) records that sink and plays it, delayed and
/// attenuated, into the daemon's stand-in microphone (`sharedsession-voice-in`), together with a
/// near-end talker; an "ear" (a third engine) records what the microphone hears. The session's voice
/// capture is what the unit receives: the microphone, echo-cancelled when the canceller is on.
/// The room's delay is held by a ``DelayLine`` (an acoustic path does not change its length when the
/// machine is busy), so a run on a loaded machine measures the canceller in the same room as a quiet one.
final class EchoRoom {
    /// The stand-in microphone's sink side (Scripts/pipewire-headless).
    static let microphone = "sharedsession-voice-in"
    static let rate = 48_000

    /// The movie: speech said fast and looped (the dialogue of a film) over a soft bed of low-passed
    /// noise (one pole at about 1 kHz: a room tone, kept below the 8 kHz the WebRTC canceller works in).
    static let movie: [Float] = {
        let speech =
            (try? Speech.make(
                "Nobody leaves this house until we know who opened the door. I heard footsteps on the stairs, "
                    + "then the lights went out, and when they came back the letter was gone.",
                voice: .init("en-us+m3", ["-s", "200"]), trimmedAt: 0.001)) ?? []
        var noise = SeededNoise(seed: 18)
        var bed: Float = 0
        return speech.flatMap { sample -> [Float] in
            bed += 0.12 * (noise.next() - bed)
            let value = 0.5 * sample + 0.05 * bed
            return [value, value]
        }
    }()

    /// The near-end talker: `leadSeconds` of silence, then a sentence, then silence.
    static func nearEnd(leadSeconds: Double) throws -> [Float] {
        let speech = try Speech.make(
            "Hold on, I think I missed what she said. Can you go back ten seconds and play that part again for me?",
            voice: .init("en-gb+f3", ["-s", "150"]), trimmedAt: 0.001)
        let lead = [Float](repeating: 0, count: Int(leadSeconds * Double(rate)))
        let tail = [Float](repeating: 0, count: 2 * rate)
        return (lead + speech.map { 0.5 * $0 } + tail).flatMap { [$0, $0] }
    }

    let session: SharedSession
    let engine: PipeWireEngine
    let room: PipeWireEngine
    let ear: PipeWireEngine
    /// What the microphone hears (the ear's recording of the stand-in microphone's sink).
    let heard = try! AudioRingBuffer(minimumCapacity: 48_000 * 4)
    /// The sink's monitor, which the room plays back delayed into the microphone.
    private let echoRing: AudioRingBuffer
    /// Plays the sink's monitor back into the microphone `delay` behind it.
    let echoLine: DelayLine
    private var echoStream: StreamHandle?
    private var roomSession: SharedSession

    /// - Parameters:
    ///   - voiceConfiguration: the session's voice configuration (`.voice` asks for voice processing).
    ///   - delay: the room's delay from the sink to the microphone, on top of the graph's own.
    ///   - attenuation: the echo's gain (linear).
    init(voiceConfiguration: SessionConfiguration = .voice, delay: Duration, attenuation: Float) throws {
        try Daemon.ensureRunning()
        engine = try PipeWireEngine(applicationName: "SharedSession echo tests")
        session = SharedSession(engine: engine, policy: try SessionPolicy(voiceConfiguration: voiceConfiguration))
        room = try PipeWireEngine(applicationName: "SharedSession echo room")
        roomSession = SharedSession(engine: room)
        ear = try PipeWireEngine(applicationName: "SharedSession echo ear")
        let delayFrames =
            Int(delay.components.attoseconds / 1_000_000_000_000_000) * Self.rate / 1000
            + Int(delay.components.seconds) * Self.rate
        echoRing = try AudioRingBuffer(minimumCapacity: 48_000 * 2)
        echoLine = DelayLine(ring: echoRing, delayFrames: delayFrames)
        try room.startMonitorRecording(into: echoRing, sink: "sharedsession-sink")
        echoStream = try roomSession.openStream(
            StreamDescriptor(name: "room echo", role: .communication, target: Self.microphone),
            source: echoLine, owner: "room")
        try echoStream?.setVolume(attenuation)
        try ear.startMonitorRecording(into: heard, sink: Self.microphone)
    }

    /// Plays the near-end talker into the microphone.
    func startNearEnd(_ samples: [Float]) throws {
        _ = try roomSession.openStream(
            StreamDescriptor(name: "near end", role: .communication, target: Self.microphone),
            source: try PCMBufferSource(samples: samples, loops: false), owner: "room")
    }

    /// Collects the session's capture and what the microphone heard for `duration`, draining both rings
    /// every 20 ms (the capture ring holds 4 s).
    func record(for duration: Duration) async throws -> (captured: [Float], heard: [Float]) {
        var captured: [Float] = []
        var microphone: [Float] = []
        _ = session.voiceInput.readAll()
        _ = heard.readAll()
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(20))
            captured += session.voiceInput.readAll()
            microphone += heard.readAll()
        }
        return (captured, microphone)
    }

    func stop() {
        session.close()
        roomSession.close()
        room.stopMonitorRecording()
        ear.stopMonitorRecording()
        engine.shutdown()
        room.shutdown()
        ear.shutdown()
    }

    /// The nodes of this process's engines on the daemon whose name has `part` (`pw-cli ls Node`).
    static func nodes(containing part: String) -> [String] {
        let output = Daemon.run("pw-cli", ["ls", "Node"]).output
        return output.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("node.name"), line.contains("sharedsession.\(getpid())."), line.contains(part) else {
                return nil
            }
            return line.split(separator: "\"").dropFirst().first.map(String.init)
        }
    }

    /// Mean power of the left channel of interleaved stereo `samples` over `seconds`.
    static func power(_ samples: [Float], _ seconds: ClosedRange<Double>) -> Double {
        let from = min(samples.count / 2, Int(seconds.lowerBound * Double(rate)))
        let to = min(samples.count / 2, Int(seconds.upperBound * Double(rate)))
        guard to > from else { return 0 }
        var sum = 0.0
        for frame in from..<to { sum += Double(samples[frame * 2]) * Double(samples[frame * 2]) }
        return sum / Double(to - from)
    }

    static func decibels(_ power: Double) -> Double { 10 * log10(max(power, 1e-20)) }
}
