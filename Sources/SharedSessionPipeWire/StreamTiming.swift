import SharedSession
import Synchronization

/// When the listener hears what a playback stream renders, from the figures PipeWire reports for it
/// (`pw_stream_get_time_n`), computed as PipeWire's `stream.h` says: the first frame of a buffer
/// queued now is heard at `now + delay + (queued + buffered) / rate`, where
/// - `now` is the monotonic instant of the graph cycle the figures were taken at;
/// - `delay` is the delay to the device in the graph's ticks: every filter on the route and the
///   device's own (an ALSA card's buffer, a Bluetooth sink's codec and transport), as the nodes on
///   the route declare it;
/// - `queued` is what the stream holds that the graph has not taken yet (the `pw_buffer.size` of
///   each queued buffer, which the engine sets to its frames), and `buffered` what the stream's
///   resampler holds, in the stream's frames.
///
/// **At least one quantum to the device.** A driver plays what the graph made in a cycle at the start
/// of the next one, so no route is shorter than a quantum; ALSA and Bluetooth sinks declare it
/// (`min_quantum = 1` on their port). PipeWire's null sink (the "Dummy Output" of a machine without
/// a card, a virtual sink made with `module-null-sink`) declares nothing and reports a delay of 0,
/// yet plays a quantum late all the same: measured on the test daemon's null sink, a click was heard
/// exactly one quantum after the reported instant at quanta 256, 1024 and 4096. So a delay shorter
/// than the buffer's quantum is taken as one quantum.
///
/// A plain value, computed on the data thread without allocating, and tested without a daemon.
struct LatencyReading: Sendable, Hashable {
    var now: Int64
    var rateNumerator: UInt32
    var rateDenominator: UInt32
    var delay: Int64
    var queued: UInt64
    var buffered: UInt64
    /// Frames in the buffer being rendered: the quantum, in the stream's rate.
    var frames: Int

    /// Why a reading was refused: an RT-safe code and the figure, made into a message on the loop.
    enum Refusal: Int, Sendable {
        case noRate = 1
        case negativeDelay
        case queueTooLong
        case tooLong
    }

    /// The longest latency taken as real: longer than any route has (Bluetooth headphones 150 to
    /// 250 ms, an AirPlay or network sink about 2 s). A longer figure is a fault of the report.
    static let maximumNanoseconds: Int64 = 5_000_000_000
    /// The most frames a stream's queue or resampler can hold: the largest quantum, twice.
    static let maximumQueuedFrames: UInt64 = 2 * UInt64(AudioFormat.maximumQuantum)

    enum Outcome: Sendable, Hashable {
        /// Not timed yet: the stream has not run a cycle.
        case notYet
        /// The latency from `now` to the listener, in nanoseconds.
        case latency(Int64)
        /// A figure that cannot be right, and the figure.
        case refused(Refusal, Int64)
    }

    /// The latency this reading gives for a stream at `sampleRate`, or why it is refused.
    func evaluate(sampleRate: Int) -> Outcome {
        guard now > 0 else { return .notYet }
        guard rateNumerator > 0, rateDenominator > 0 else { return .refused(.noRate, Int64(rateDenominator)) }
        guard delay >= 0 else { return .refused(.negativeDelay, delay) }
        guard queued <= Self.maximumQueuedFrames, buffered <= Self.maximumQueuedFrames else {
            return .refused(.queueTooLong, Int64(truncatingIfNeeded: max(queued, buffered)))
        }
        // delay ticks × num / den seconds; in ns without overflow for any delay under 2^33 ticks.
        guard delay < 1 << 33 else { return .refused(.tooLong, delay) }
        let quantumNanoseconds = Int64(frames) &* 1_000_000_000 / Int64(sampleRate)
        let delayNanoseconds = max(
            delay &* 1_000_000_000 &* Int64(rateNumerator) / Int64(rateDenominator), quantumNanoseconds)
        let queueNanoseconds = Int64(queued &+ buffered) &* 1_000_000_000 / Int64(sampleRate)
        let total = delayNanoseconds &+ queueNanoseconds
        guard total <= Self.maximumNanoseconds else { return .refused(.tooLong, total) }
        return .latency(total)
    }

    /// What a refusal says, for the event.
    static func describe(_ refusal: Refusal, _ figure: Int64) -> String {
        switch refusal {
        case .noRate:
            "PipeWire reported no graph rate (denominator \(figure)); the stream keeps its last latency"
        case .negativeDelay:
            "PipeWire reported a negative delay to the device (\(figure) ticks); the stream keeps its last latency"
        case .queueTooLong:
            "PipeWire reported \(figure) frames queued in the stream, more than any quantum allows; "
                + "the stream keeps its last latency"
        case .tooLong:
            "PipeWire reported a latency of \(Double(figure) / 1e6) ms or more to the device, longer than any "
                + "route has (at most \(maximumNanoseconds / 1_000_000) ms is taken); the stream keeps its last latency"
        }
    }
}

/// What a playback node's process callback found about its timing, for the loop to report: atomics
/// only.
final class StreamTiming: Sendable {
    /// Readings refused so far, and the last refusal's code and figure.
    let refusals = Atomic<Int>(0)
    let lastRefusal = Atomic<Int>(0)
    let lastFigure = Atomic<Int64>(0)

    /// When the first frame of the buffer about to be queued is heard and the latency, from the
    /// stream's time as `pw_stream_get_time_n` read it (a sequence-locked copy, real-time safe); nil
    /// when it is not known yet or was refused (counted, for the loop to report).
    @inline(__always)
    func note(_ reading: LatencyReading, sampleRate: Int) -> (heardAt: MonotonicInstant, latency: Int)? {
        switch reading.evaluate(sampleRate: sampleRate) {
        case .notYet:
            return nil
        case .latency(let nanoseconds):
            return (MonotonicInstant(nanoseconds: reading.now &+ nanoseconds), Int(nanoseconds))
        case .refused(let refusal, let figure):
            lastRefusal.store(refusal.rawValue, ordering: .relaxed)
            lastFigure.store(figure, ordering: .relaxed)
            refusals.add(1, ordering: .releasing)
            return nil
        }
    }
}

/// Which output latency the engine last reported for each stream, and when a new figure is a
/// change worth an event: more than ``threshold`` from the one reported, so the timestamps'
/// jitter is not reported as a change while a route, quantum or filter change always is.
struct LatencyWatch: Sendable {
    /// Smaller changes are jitter: a quarter of the clock's promised accuracy at the ear.
    static let threshold: Int64 = 250_000

    private var reported: [StreamID: Duration] = [:]
    private var refusalsSeen: [ObjectIdentifier: Int] = [:]

    /// The event for `stream` whose renderer now says `latency`, if it changed.
    mutating func read(_ latency: Duration?, of stream: StreamID) -> EngineEvent? {
        guard let latency else { return nil }
        let old = reported[stream]
        if let old, abs((latency - old).inNanoseconds) <= Self.threshold { return nil }
        reported[stream] = latency
        return .outputLatencyChanged(stream: stream, from: old, to: latency)
    }

    /// The refusal events for the `streams` a node with `timing` plays, if it refused a reading since
    /// the last look.
    mutating func readRefusals(_ timing: StreamTiming, of streams: [StreamID]) -> [EngineEvent] {
        let count = timing.refusals.load(ordering: .acquiring)
        let key = ObjectIdentifier(timing)
        guard count != refusalsSeen[key, default: 0] else { return [] }
        refusalsSeen[key] = count
        guard let refusal = LatencyReading.Refusal(rawValue: timing.lastRefusal.load(ordering: .relaxed)) else {
            return []
        }
        let reason = LatencyReading.describe(refusal, timing.lastFigure.load(ordering: .relaxed))
        return streams.map { .outputLatencyRejected(stream: $0, reason: reason) }
    }

    /// Forgets a closed stream.
    mutating func forget(_ stream: StreamID) {
        reported[stream] = nil
    }
}
