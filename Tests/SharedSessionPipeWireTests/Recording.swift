import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import Synchronization
import Testing

/// Records what the default sink plays (its monitor) through a second engine of the test's own,
/// so the recording is what any listener of the sink would hear.
final class SinkRecorder {
    let engine: PipeWireEngine
    private let ring: AudioRingBuffer
    /// Interleaved stereo samples recorded so far.
    private(set) var samples: [Float] = []

    init() throws {
        engine = try PipeWireEngine(applicationName: "SharedSession test recorder")
        ring = try AudioRingBuffer(minimumCapacity: 1 << 20)
        try engine.startMonitorRecording(into: ring)
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

    /// Sleeps `duration`, collecting the recording meanwhile.
    func record(for duration: Duration) async throws {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(20))
            poll()
        }
    }

    /// Lets `settle` pass (a fade, a quantum in flight), then records `window` and returns the RMS of
    /// that window in dBFS: what a silence check measures.
    func level(after settle: Duration, over window: Duration) async throws -> Double {
        try await record(for: settle)
        let from = mark()
        try await record(for: window)
        return Signal.rms(samples, from: from, frames: samples.count / 2 - from)
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
            if frames >= 480, Signal.level(samples, frequency: frequency, from: frames - 480, frames: 480) >= level {
                return frames - 480
            }
        }
        Issue.record("no \(frequency) Hz tone at \(level) dBFS or more within \(timeout)")
        throw CancellationError()
    }

    /// The main tone's level over the last 100 ms recorded.
    func mainLevelNow() -> Double {
        let end = mark()
        return Signal.level(samples, frequency: mainTone, from: end - 4800, frames: 4800)
    }

    func stop() {
        engine.stopMonitorRecording()
        poll()
        engine.shutdown()
    }
}

/// Levels measured from interleaved stereo recordings (left channel).
enum Signal {
    /// The amplitude of the `frequency` component over `frames` frames from `from`, in dBFS
    /// (a full-scale sine is 0 dB), by the Goertzel algorithm. Exact for windows that hold whole cycles.
    static func level(_ samples: [Float], frequency: Double, from: Int, frames: Int) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / 48_000)
        var s1 = 0.0
        var s2 = 0.0
        for frame in from..<(from + frames) {
            let s = Double(samples[frame * 2]) + coefficient * s1 - s2
            s2 = s1
            s1 = s
        }
        let power = max(0, s1 * s1 + s2 * s2 - coefficient * s1 * s2)
        return decibels(2 * power.squareRoot() / Double(frames))
    }

    /// RMS of the left channel in dBFS.
    static func rms(_ samples: [Float], from: Int, frames: Int) -> Double {
        var sum = 0.0
        for frame in from..<(from + frames) { sum += Double(samples[frame * 2]) * Double(samples[frame * 2]) }
        return decibels((sum / Double(max(frames, 1))).squareRoot())
    }

    static func decibels(_ amplitude: Double) -> Double { 20 * log10(max(amplitude, 1e-9)) }

    /// The first frame at or after `from` that ends a 10 ms window whose `frequency` level is at or
    /// below `threshold` (hop 1 ms); nil if none before `until`.
    static func firstFrame(
        _ samples: [Float], frequency: Double, atOrBelow threshold: Double, from: Int, until: Int
    ) -> Int? {
        var start = from
        while start + 480 <= until {
            if level(samples, frequency: frequency, from: start, frames: 480) <= threshold { return start + 480 }
            start += 48
        }
        return nil
    }

    /// The largest step between consecutive left samples in a range: a tone of amplitude A at f Hz
    /// never steps more than 2πfA/48000, so a gap or a jump shows as a larger one.
    static func largestStep(_ samples: [Float], from: Int, until: Int) -> Float {
        var largest: Float = 0
        for frame in (from + 1)..<until {
            largest = max(largest, abs(samples[frame * 2] - samples[(frame - 1) * 2]))
        }
        return largest
    }
}

/// The events an engine reported, in order.
final class EngineEventLog: Sendable {
    private let events = Mutex<[EngineEvent]>([])

    func append(_ event: EngineEvent) { events.withLock { $0.append(event) } }
    var all: [EngineEvent] { events.withLock { $0 } }

    /// Waits for an event matching `predicate`, polling; returns it or nil after `timeout`.
    func wait(
        timeout: Duration = .seconds(5), for predicate: (EngineEvent) -> Bool
    ) async throws -> EngineEvent? {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if let event = all.first(where: predicate) { return event }
            try await Task.sleep(for: .milliseconds(10))
        }
        return all.first(where: predicate)
    }
}

/// Frames to milliseconds at 48 kHz.
func milliseconds(_ frames: Int) -> Double { Double(frames) / 48.0 }

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) * 1e-15
    }
}
