import SharedSession
import SharedSessionPipeWireTesting
import Testing

@testable import SharedSessionPipeWire

/// What the engine makes of the figures PipeWire reports for a stream's time, without a daemon.
@Suite("Output latency without a daemon")
struct LatencyReadingTests {
    /// A cycle at 10 s, at 48 kHz, of `frames` frames, with what the route declares.
    static func reading(delay: Int64, queued: UInt64 = 0, buffered: UInt64 = 0, frames: Int = 1024) -> LatencyReading {
        LatencyReading(
            now: 10_000_000_000, rateNumerator: 1, rateDenominator: 48_000, delay: delay, queued: queued,
            buffered: buffered, frames: frames)
    }

    @Test("the latency is the route's delay plus the stream's queue and resampler, as stream.h computes it")
    func declared() {
        // A Bluetooth sink: one quantum and 9,600 frames (200 ms) of codec and transport.
        #expect(Self.reading(delay: 1024 + 9600).evaluate(sampleRate: 48_000) == .latency(221_333_333))
        // With a buffer the graph has not taken and 64 frames in the resampler.
        #expect(
            Self.reading(delay: 2048, queued: 1024, buffered: 64).evaluate(sampleRate: 48_000)
                == .latency(42_666_666 + 22_666_666))
        // A graph at 44.1 kHz: the delay is in its ticks.
        let slow = LatencyReading(
            now: 1, rateNumerator: 1, rateDenominator: 44_100, delay: 4410, queued: 0, buffered: 0, frames: 1024)
        #expect(slow.evaluate(sampleRate: 48_000) == .latency(100_000_000))
    }

    @Test("a route that declares less than a quantum (the null sink: 0) is heard a quantum late")
    func atLeastAQuantum() {
        for frames in [256, 1024, 4096] {
            let quantum = Int64(frames) * 1_000_000_000 / 48_000
            #expect(Self.reading(delay: 0, frames: frames).evaluate(sampleRate: 48_000) == .latency(quantum))
            #expect(Self.reading(delay: 10, frames: frames).evaluate(sampleRate: 48_000) == .latency(quantum))
        }
    }

    @Test("figures that cannot be right are refused with what was wrong, never a latency")
    func refused() {
        #expect(
            LatencyReading(
                now: 0, rateNumerator: 1, rateDenominator: 48_000, delay: 0, queued: 0, buffered: 0, frames: 256
            )
            .evaluate(sampleRate: 48_000) == .notYet)
        let noRate = LatencyReading(
            now: 5, rateNumerator: 1, rateDenominator: 0, delay: 1024, queued: 0, buffered: 0, frames: 1024)
        #expect(noRate.evaluate(sampleRate: 48_000) == .refused(.noRate, 0))
        #expect(Self.reading(delay: -480).evaluate(sampleRate: 48_000) == .refused(.negativeDelay, -480))
        #expect(
            Self.reading(delay: 1024, queued: 1 << 40).evaluate(sampleRate: 48_000) == .refused(.queueTooLong, 1 << 40))
        // Ten seconds to the device: no route has that.
        #expect(Self.reading(delay: 480_000).evaluate(sampleRate: 48_000) == .refused(.tooLong, 10_000_000_000))
        #expect(Self.reading(delay: 1 << 40).evaluate(sampleRate: 48_000) == .refused(.tooLong, 1 << 40))
        // Five seconds is the longest taken.
        #expect(Self.reading(delay: 240_000).evaluate(sampleRate: 48_000) == .latency(5_000_000_000))

        let message = LatencyReading.describe(.negativeDelay, -480)
        #expect(message.contains("-480") && message.contains("negative"))
        #expect(LatencyReading.describe(.tooLong, 10_000_000_000).contains("10000.0 ms"))
    }

    @Test("a refused reading keeps the clock's last instant: the node counts it and gives no instant")
    func refusalCounted() {
        let timing = StreamTiming()
        #expect(timing.note(Self.reading(delay: 2048), sampleRate: 48_000)?.latency == 42_666_666)
        #expect(timing.note(Self.reading(delay: -1), sampleRate: 48_000) == nil)
        #expect(timing.refusals.load(ordering: .relaxed) == 1)

        var watch = LatencyWatch()
        let events = watch.readRefusals(timing, of: [StreamID(rawValue: 3)])
        #expect(events.count == 1)
        if case .outputLatencyRejected(let stream, let reason) = events.first {
            #expect(stream == StreamID(rawValue: 3))
            #expect(reason.contains("negative delay"))
        }
        #expect(watch.readRefusals(timing, of: [StreamID(rawValue: 3)]).isEmpty)
    }

    @Test("a change of a stream's latency is an event once, with the old and new figures; jitter is not")
    func changes() {
        var watch = LatencyWatch()
        let stream = StreamID(rawValue: 1)
        #expect(watch.read(nil, of: stream) == nil)
        #expect(
            watch.read(.microseconds(21_333), of: stream)
                == .outputLatencyChanged(stream: stream, from: nil, to: .microseconds(21_333)))
        #expect(watch.read(.microseconds(21_500), of: stream) == nil)
        #expect(
            watch.read(.microseconds(221_333), of: stream)
                == .outputLatencyChanged(stream: stream, from: .microseconds(21_333), to: .microseconds(221_333)))
        watch.forget(stream)
        #expect(
            watch.read(.microseconds(221_333), of: stream)
                == .outputLatencyChanged(stream: stream, from: nil, to: .microseconds(221_333)))
    }

    @Test("a latency sink refuses a delay below zero or above 2 s, and an empty name, naming the value")
    func latencySinkRefusesBadValues() {
        let delays: [(Duration, String)] = [
            (.milliseconds(-1), "-0.001"), (.milliseconds(2001), "2.001"), (.seconds(60), "60.0"),
        ]
        for (delay, named) in delays {
            #expect {
                _ = try DeclaredLatencySink(name: "pretend-headphones", target: "sink", delay: delay)
            } throws: { error in
                guard let error = error as? SessionError else { return false }
                return error.code == .invalidValue && error.message.contains("latency sink delay \(named) ")
                    && error.message.contains("from 0 through")
            }
        }
        #expect {
            _ = try DeclaredLatencySink(name: "", target: "sink", delay: .milliseconds(200))
        } throws: { error in
            guard let error = error as? SessionError else { return false }
            return error.code == .invalidValue && error.message.contains("needs a name")
        }
    }
}
