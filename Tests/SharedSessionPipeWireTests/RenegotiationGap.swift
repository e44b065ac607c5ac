import Foundation
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// A `pw-play` in another process, the reference for a gap in the audio of the streams under test when
/// the server renegotiates (PipeWire 1.x pauses every stream for a forced quantum): it plays the main
/// tone (1 kHz at 0.5) into a null sink of its own, made for it and removed after it, whose monitor a
/// recorder of its own records. So its gap is read the same way as ours, on the same change and on the
/// same kind of route (a null sink driving its own graph, as ours does), without its audio in our
/// recording: on 0.3.65 a `pw-play` asking for 1024 frames was seen to drop 86-129 ms when the quantum
/// was forced to 4096, which would put steps in ours. Not a loopback's sink: a loopback's buffer hides
/// some of the pauses of what plays into it.
final class ReferencePlayer {
    static let sink = "sharedsession-reference-sink"
    let node: Int
    let child: Daemon.Child
    let recorder: SinkRecorder

    /// Starts it for `seconds`, asking for the graph's default quantum (pw-play asks for 100 ms
    /// otherwise, which would move the graph to 4096 before the test forces it).
    init(seconds: Double) throws {
        // Its session priority is the lowest, so WirePlumber never makes it the default sink.
        node = try Daemon.createNullSink(named: Self.sink, extra: "priority.session = 1 priority.driver = 1 ")
        do {
            recorder = try SinkRecorder(sink: Self.sink)
            let file = try Daemon.writeTone(frequency: mainTone, amplitude: 0.5, seconds: seconds)
            child = try Daemon.launch("pw-play", ["--latency", "1024", "--target", Self.sink, file.path])
        } catch {
            Daemon.run("pw-cli", ["destroy", "\(node)"])
            throw error
        }
    }

    /// Waits until its tone is in its recording; returns the frame where it is.
    func waitUntilPlaying() async throws -> Int {
        try await recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
    }

    /// The longest gap in its tone from `frame` to 10 ms before the end of its recording.
    func gap(from frame: Int) throws -> Double {
        let end = recorder.mark() - 480
        return try longestGap(recorder.samples, frequency: mainTone, level: mainLevel, frames: frame..<end)
    }

    func stop() {
        kill(child.pid, SIGKILL)
        child.waitUntilExit()
        recorder.stop()
        Daemon.run("pw-cli", ["destroy", "\(node)"])
    }
}

/// The longest stretch, in milliseconds, in which the `frequency` tone of a recording reads more than
/// 6 dB under `level`: a gap in that stream's audio. Read over 2 ms windows (two cycles of 1 kHz)
/// every 0.5 ms; a gap of g frames leaves about g - 24 frames of windows that half miss
/// the tone, so the figure is their span plus one hop.
func longestGap(_ samples: [Float], frequency: Double, level: Double, frames: Range<Int>) throws -> Double {
    let size = 96
    let hop = 24
    var longest = 0
    var run = 0
    var frame = frames.lowerBound
    while frame + size <= frames.upperBound {
        if try meter.toneLevel(samples, frequency: frequency, frames: window(frame, size)) < level - 6 {
            run += 1
            longest = max(longest, run)
        } else {
            run = 0
        }
        frame += hop
    }
    return longest == 0 ? 0 : meter.milliseconds(frames: (longest + 1) * hop)
}

/// The longest gap a renegotiation on PipeWire 1.x leaves in a stream on a quiet machine, ours or
/// `pw-play`'s: one cycle of the new quantum, which the server may start while the stream is paused and then never call
/// the stream in, plus 2.5 ms (the 1.5 ms the pause itself was measured to cost beside it, and the
/// 2 ms windows' reach). Which stream loses that cycle depends on where the cycle starts against its
/// pause: in 65 runs on 1.4.2, ours lost it in 3 and pw-play's in 1, each time beside a 0-1.5 ms gap in
/// the other; a trace of our process callbacks showed the graph had started the cycle during the pause.
func renegotiationGapFigure(quantum: Int) -> Double { meter.milliseconds(frames: quantum) + 2.5 }

/// The gap the tests allow: ``renegotiationGapFigure(quantum:)`` on a loaded machine (the pause and the
/// buffers set up again are the client's main loop's work, which is not real-time). The figure itself is
/// printed as `[measure]` and published by `Benchmarks/run`.
func renegotiationGapLimit(quantum: Int) -> Double {
    LoadedMachine.bound(milliseconds: renegotiationGapFigure(quantum: quantum))
}
