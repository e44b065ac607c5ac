import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTesting
import Testing

/// Records what the default sink plays (its monitor) through a second engine of the test's own,
/// so the recording is what any listener of the sink would hear.
final class SinkRecorder {
    let engine: PipeWireEngine
    private let ring: AudioRingBuffer
    /// Interleaved stereo samples recorded so far.
    private(set) var samples: [Float] = []

    /// Records the default sink, or the sink named `sink`.
    init(sink: String? = nil) throws {
        engine = try PipeWireEngine(applicationName: "SharedSession test recorder")
        ring = try AudioRingBuffer(minimumCapacity: 1 << 20)
        try engine.startMonitorRecording(into: ring, sink: sink)
    }

    /// Moves what the capture wrote into ``samples``.
    func poll() {
        samples += ring.readAll()
    }

    /// Frames recorded up to now: the position in the recording of something the test does next.
    func mark() -> Int {
        poll()
        return samples.count / 2
    }

    /// Records until `duration` more of audio is in the recording (counted in recorded frames, not
    /// on this thread's clock, so a loaded machine that delays this task records just as much), or
    /// fails the test if the recording stalls for `timeout` (5 s beyond the duration by default).
    func record(for duration: Duration, timeout: Duration? = nil) async throws {
        let wanted = mark() + Int(duration.milliseconds * 48)
        let deadline = ContinuousClock.now + duration + (timeout ?? .seconds(5))
        while samples.count / 2 < wanted {
            guard ContinuousClock.now < deadline else {
                Issue.record("the recording stalled: \(samples.count / 2) of \(wanted) frames after \(duration)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
            poll()
        }
    }

    /// Lets `settle` pass (a fade, a quantum in flight), then records `window` and returns the RMS of
    /// that window in dBFS: what a silence check measures.
    func level(after settle: Duration, over window: Duration) async throws -> Double {
        try await record(for: settle)
        let from = mark()
        try await record(for: window)
        return try meter.rms(samples, frames: from..<(samples.count / 2))
    }

    /// Waits until the last 10 ms recorded carry `frequency` at `atLeast` dBFS or more; returns the
    /// frame where they start.
    @discardableResult
    func waitForTone(_ frequency: Double, atLeast level: Double, timeout: Duration = .seconds(5)) async throws -> Int {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(20))
            poll()
            let frames = samples.count / 2
            if frames >= 480,
                try meter.toneLevel(samples, frequency: frequency, frames: window(frames - 480, 480)) >= level
            {
                return frames - 480
            }
        }
        Issue.record("no \(frequency) Hz tone at \(level) dBFS or more within \(timeout)")
        throw CancellationError()
    }

    /// The main tone's level over the last 100 ms recorded.
    func mainLevelNow() throws -> Double {
        let end = mark()
        return try meter.toneLevel(samples, frequency: mainTone, frames: window(end - 4800, 4800))
    }

    /// The main tone's level a player holds over the last 300 ms recorded: the median of its three
    /// 100 ms windows, with each window's level. A cycle's dropout (mpv starved of the CPU read 1.50 dB
    /// low over a whole 100 ms once) lowers one window. The windows are 100 ms, not 10: mpv's tone when
    /// ducked read −24.7 to −27.2 dBFS in consecutive 10 ms windows around its −26.02, a pattern repeating
    /// every 50 ms, which a 100 ms window averages out.
    func steadyMainLevelNow() throws -> (level: Double, windows: [Double]) {
        let end = mark()
        let windows = try (0..<3).map { index in
            try meter.toneLevel(samples, frequency: mainTone, frames: window(end - 14_400 + index * 4800, 4800))
        }
        return (windows.sorted()[1], windows)
    }

    /// The main tone's level the player holds over the last 100 ms recorded: the median of its ten
    /// 10 ms windows, with each window's level. A player starved of the CPU for a few cycles (mpv on a
    /// busy machine) leaves silence in a window or two, which reads the 100 ms whole several dB low;
    /// a level the player was left at holds in every window.
    func heldMainLevelNow() throws -> (level: Double, windows: [Double]) {
        let end = mark()
        let windows = try (0..<10).map { index in
            try meter.toneLevel(samples, frequency: mainTone, frames: window(end - 4800 + index * 480, 480))
        }
        return (windows.sorted()[5], windows)
    }

    func stop() {
        engine.stopMonitorRecording()
        poll()
        engine.shutdown()
    }
}

/// The meter every PipeWire test reads recordings with: left channel of 48 kHz stereo.
let meter = LevelMeter()

/// `frames` frames from `start`, as a range for the meter.
func window(_ start: Int, _ frames: Int) -> Range<Int> { start..<(start + frames) }

/// Frames to milliseconds at 48 kHz.
func milliseconds(_ frames: Int) -> Double { Double(frames) / 48.0 }

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) * 1e-15
    }
}
