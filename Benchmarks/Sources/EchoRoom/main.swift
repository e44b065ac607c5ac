// echo-room: how much of the movie the voice chat's echo canceller takes out of the microphone.
//
//   echo-room [--out DIR] [--runs N]
//
// On a running PipeWire daemon with Scripts/pipewire-headless's stand-in microphone
// (sharedsession-voice-in → sharedsession-voice), a simulated room: a session plays a movie (dialogue
// said by espeak-ng, looped, over a low-passed noise bed) on the default sink; a "room" engine records
// the sink and plays it into the microphone delayed (20, 50 or 80 ms on top of the graph's own path)
// and attenuated (-10.5 dB), and after 10 s a near-end talker speaks into the microphone over it; an
// "ear" engine records what the microphone hears. The session holds a voice session, with a voiceChat
// configuration (the engine cancels echo) or a playAndRecord one of mode default (it does not), and
// its capture is what the unit receives. The room's delay is held (`DelayLine`), as an acoustic path
// holds it on a busy machine. Reports, per delay, with the canceller and without:
//   ERLE: the echo's level in the microphone minus in the capture, 6-9 s after the voice session
//         began (the movie alone; the canceller was seen to take 3.5 to 5 s to converge);
//   near end kept: the talker's level in the capture minus in the microphone, 10.5-14 s (double talk;
//         the echo's power of the first window subtracted from each).
// Then the room of PipeWireEchoCancelTests (40 ms) with the canceller N times (default 20): ERLE and
// near end kept, median and worst, beside the bounds the test keeps.
// Prints a Markdown report (and writes DIR/echo-room.md with --out). Needs espeak-ng and ffmpeg.
import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTesting

let rate = 48_000
let microphone = "sharedsession-voice-in"

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("echo-room: \(message)\n".utf8))
    exit(1)
}

func run(_ command: String, _ arguments: [String]) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [command] + arguments
    process.standardOutput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    do { try process.run() } catch { fail("cannot run \(command): \(error) (Scripts/install media installs it)") }
    let message = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        fail("\(command) \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
    }
}

/// `text` said by espeak-ng through Opus (32 kb/s, VoIP), mono 48 kHz, trimmed to what is audible.
func speech(_ text: String, voice: [String]) -> [Float] {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("echo-room-\(getpid())").path
    defer { for suffix in [".wav", ".opus", ".f32"] { unlink(base + suffix) } }
    run("espeak-ng", voice + ["-w", base + ".wav", text])
    run(
        "ffmpeg",
        [
            "-loglevel", "error", "-y", "-i", base + ".wav", "-c:a", "libopus", "-b:a", "32k", "-application", "voip",
            base + ".opus",
        ])
    run(
        "ffmpeg",
        ["-loglevel", "error", "-y", "-i", base + ".opus", "-ar", "48000", "-ac", "1", "-f", "f32le", base + ".f32"])
    guard let data = FileManager.default.contents(atPath: base + ".f32") else { fail("no audio from ffmpeg") }
    let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    guard let first = samples.firstIndex(where: { abs($0) >= 0.001 }),
        let last = samples.lastIndex(where: { abs($0) >= 0.001 })
    else { fail("espeak-ng said nothing") }
    return Array(samples[first...last])
}

let movie: [Float] = {
    let said = speech(
        "Nobody leaves this house until we know who opened the door. I heard footsteps on the stairs, "
            + "then the lights went out, and when they came back the letter was gone.",
        voice: ["-v", "en-us+m3", "-s", "200"])
    var state: UInt64 = 18
    var bed: Float = 0
    return said.flatMap { sample -> [Float] in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let noise = Float(Int64(bitPattern: state) >> 11) / Float(1 << 52)
        bed += 0.12 * (noise - bed)
        let value = 0.5 * sample + 0.05 * bed
        return [value, value]
    }
}()
let nearEnd: [Float] = {
    let said = speech(
        "Hold on, I think I missed what she said. Can you go back ten seconds and play that part again for me?",
        voice: ["-v", "en-gb+f3", "-s", "150"])
    let lead = [Float](repeating: 0, count: 10 * rate)
    return (lead + said.map { 0.5 * $0 } + [Float](repeating: 0, count: 2 * rate)).flatMap { [$0, $0] }
}()

func power(_ samples: [Float], _ seconds: ClosedRange<Double>) -> Double {
    let from = min(samples.count / 2, Int(seconds.lowerBound * Double(rate)))
    let to = min(samples.count / 2, Int(seconds.upperBound * Double(rate)))
    guard to > from else { return 0 }
    var sum = 0.0
    for frame in from..<to { sum += Double(samples[frame * 2]) * Double(samples[frame * 2]) }
    return sum / Double(to - from)
}

func decibels(_ power: Double) -> Double { 10 * log10(max(power, 1e-20)) }

struct Result {
    let erle: Double
    let kept: Double
    let echoInMicrophone: Double
    let nearInMicrophone: Double
    let cancelling: Bool
}

func measure(cancelling: Bool, delayMilliseconds: Int, attenuation: Float) async throws -> Result {
    let configuration =
        cancelling
        ? SessionConfiguration.voice
        : try SessionConfiguration(category: .playAndRecord, options: [.defaultToSpeaker], mode: .default)
    let engine = try PipeWireEngine(applicationName: "echo-room session")
    let session = SharedSession(engine: engine, policy: try SessionPolicy(voiceConfiguration: configuration))
    let room = try PipeWireEngine(applicationName: "echo-room room")
    let roomSession = SharedSession(engine: room)
    let ear = try PipeWireEngine(applicationName: "echo-room ear")
    let heard = try AudioRingBuffer(minimumCapacity: 48_000 * 4)
    let echoRing = try AudioRingBuffer(minimumCapacity: 48_000 * 2)
    defer {
        session.close()
        roomSession.close()
        room.stopMonitorRecording()
        ear.stopMonitorRecording()
        engine.shutdown()
        room.shutdown()
        ear.shutdown()
    }
    let line = DelayLine(ring: echoRing, delayFrames: delayMilliseconds * rate / 1000)
    try room.startMonitorRecording(into: echoRing, sink: "sharedsession-sink")
    let echo = try roomSession.openStream(
        StreamDescriptor(name: "room echo", role: .communication, target: microphone),
        source: line, owner: "room")
    try echo.setVolume(attenuation)
    try ear.startMonitorRecording(into: heard, sink: microphone)
    let main = try session.openMainStream(source: try PCMBufferSource(samples: movie, loops: true))
    defer { main.close() }
    let voice = try session.acquire(.voice, owner: "watch-party")
    defer { voice.release() }
    _ = try roomSession.openStream(
        StreamDescriptor(name: "near end", role: .communication, target: microphone),
        source: try PCMBufferSource(samples: nearEnd, loops: false), owner: "room")
    var captured: [Float] = []
    var microphoneHeard: [Float] = []
    _ = session.voiceInput.readAll()
    _ = heard.readAll()
    let end = ContinuousClock.now + .seconds(15)
    while ContinuousClock.now < end {
        try await Task.sleep(for: .milliseconds(20))
        captured += session.voiceInput.readAll()
        microphoneHeard += heard.readAll()
    }
    let echoWindow = 6.0...9.0
    let talkWindow = 10.5...14.0
    let echoHeard = power(microphoneHeard, echoWindow)
    let echoCaptured = power(captured, echoWindow)
    let nearHeard = power(microphoneHeard, talkWindow) - echoHeard
    let nearCaptured = power(captured, talkWindow) - echoCaptured
    return Result(
        erle: decibels(echoHeard) - decibels(echoCaptured), kept: decibels(nearCaptured) - decibels(nearHeard),
        echoInMicrophone: decibels(echoHeard), nearInMicrophone: decibels(nearHeard),
        cancelling: engine.isEchoCancelling)
}

let attenuation: Float = 0.3
let arguments = CommandLine.arguments
let runs = arguments.firstIndex(of: "--runs").flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil } ?? 20
var report = """
    A simulated room on the private daemon: the movie (dialogue said by espeak-ng, looped, over a \
    low-passed noise bed) plays on the default sink; a room engine plays what the sink plays into the \
    stand-in microphone `sharedsession-voice-in`, delayed (held at that delay, as an acoustic path is) \
    and at \(String(format: "%.1f", 20 * log10(Double(attenuation)))) dB; from 10 s a near-end talker \
    speaks into it too. ERLE: the echo's level in the microphone minus in the capture the unit receives, \
    6–9 s after the voice session began (the movie alone); near end kept: the talker's level in the \
    capture minus in the microphone, 10.5–14 s (double talk, the echo's power subtracted). With the \
    canceller: the voice configuration's mode `voiceChat` (PipeWire's echo-cancel module, WebRTC); \
    without: `playAndRecord` of mode `default`.

    | delay on top of the graph's path | canceller | echo in the microphone, dBFS | ERLE, dB | near end in the microphone, dBFS | near end kept, dB |
    | --- | --- | ---: | ---: | ---: | ---: |

    """

func measured(cancelling: Bool, delay: Int) async -> Result {
    do {
        let result = try await measure(cancelling: cancelling, delayMilliseconds: delay, attenuation: attenuation)
        guard result.cancelling == cancelling else { fail("the canceller was \(result.cancelling), not \(cancelling)") }
        return result
    } catch {
        fail("\(error)")
    }
}

for delay in [20, 50, 80] {
    for cancelling in [false, true] {
        let result = await measured(cancelling: cancelling, delay: delay)
        report += String(
            format: "| %d ms | %@ | %.1f | %.1f | %.1f | %+.1f |\n", delay, cancelling ? "on" : "off",
            result.echoInMicrophone, result.erle, result.nearInMicrophone, result.kept)
    }
}

// The room of PipeWireEchoCancelTests, many times: the figure its bounds are set against.
var erles: [Double] = []
var kepts: [Double] = []
for _ in 0..<max(runs, 1) {
    let result = await measured(cancelling: true, delay: 40)
    erles.append(result.erle)
    kepts.append(result.kept)
}
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
report += """

    The test's room (40 ms, the canceller on), \(erles.count) runs, as `PipeWireEchoCancelTests` \
    measures it:

    | figure | median | worst | best | the test's bound |
    | --- | ---: | ---: | ---: | --- |

    """
report += String(
    format: "| ERLE, dB | %.1f | %.1f | %.1f | ≥ %.0f (the echo clearly cancelled) |\n", median(erles),
    erles.min() ?? 0, erles.max() ?? 0, EchoBounds.erle)
report += String(
    format: "| near end kept, dB | %+.1f | %+.1f | %+.1f | %+.0f to %+.0f (the talker kept) |\n", median(kepts),
    kepts.min() ?? 0, kepts.max() ?? 0, EchoBounds.nearEndKept.lowerBound, EchoBounds.nearEndKept.upperBound)
let eachRun = zip(erles, kepts).map { String(format: "%.1f / %+.1f", $0, $1) }
report += "\nEach run, ERLE / near end kept (dB): " + eachRun.joined(separator: ", ") + "\n"
print(report)
if let index = arguments.firstIndex(of: "--out"), index + 1 < arguments.count {
    let url = URL(fileURLWithPath: arguments[index + 1]).appendingPathComponent("echo-room.md")
    do { try report.write(to: url, atomically: true, encoding: .utf8) } catch { fail("cannot write \(url.path)") }
}
