/// The step schedule of a gain ramp on a node the engine does not render (an adopted node).
///
/// PipeWire 0.3.65 applies a node's `channelVolumes` as a step at its next cycle, so a ramp is a
/// series of steps, written from the loop thread once per quantum. The steps are equal in decibels
/// (the gain is interpolated along the log scale between the two ends, floored at ``floor``), which
/// makes the largest step the smallest a given number of steps allows: a 20 dB duck over 150 ms at
/// quantum 1024 (7 steps) is 2.9 dB per step, where equal steps in amplitude would end with a 7.4 dB
/// one. A ramp to or from silence goes along the log scale down to ``floor`` (-60 dB), then to 0.
///
/// A plain value: the loop asks ``gain(at:)`` at each step, tested without a daemon.
package struct NodeVolumeRamp: Sendable, Equatable {
    /// The lowest gain the log interpolation goes through before silence (-60 dB).
    package static let floor: Float = 0.001

    package let from: Float
    package let to: Float
    package let start: ContinuousClock.Instant
    package let duration: Duration

    package init(from: Float, to: Float, start: ContinuousClock.Instant, duration: Duration) {
        self.from = from
        self.to = to
        self.start = start
        self.duration = duration
    }

    package var end: ContinuousClock.Instant { start + duration }

    package func isFinished(at now: ContinuousClock.Instant) -> Bool { now >= end }

    /// The gain to write at `now`: `from` before the start, `to` at and after the end, the point on the
    /// log scale in between.
    package func gain(at now: ContinuousClock.Instant) -> Float {
        guard duration > .zero, now < end else { return to }
        let fraction = max(0, min(1, (now - start) / duration))
        if from == to { return to }
        let (a, b) = (Swift.max(from, Self.floor), Swift.max(to, Self.floor))
        // Along the log scale: a · (b / a)^fraction.
        let value = Float(Double(a) * pow(Double(b) / Double(a), fraction))
        if to == 0, value <= Self.floor { return 0 }
        return value
    }

    /// The gain to write at `now` when `last` was written before: ``gain(at:)``, but never more than
    /// one of `steps` equal steps (in dB) away from `last`, so a late write does not make a bigger step.
    package func gain(at now: ContinuousClock.Instant, after last: Float, steps: Int) -> Float {
        let wanted = gain(at: now)
        let step = Self.largestStep(from: from, to: to, steps: steps)
        guard step > 0 else { return wanted }
        let ratio = Float(pow(10, step / 20))
        let lastFloor = Swift.max(last, Self.floor)
        if wanted > last {
            return Swift.min(wanted, Swift.max(lastFloor * ratio, last))
        } else if wanted < last {
            let next = last / ratio
            if to == 0, next <= Self.floor { return 0 }
            return Swift.max(wanted, next)
        }
        return wanted
    }

    /// The number of steps a ramp of `duration` takes when written once per `quantum` frames at
    /// `rate`: at least one.
    package static func steps(duration: Duration, quantum: Int, rate: Int = 48_000) -> Int {
        let period = Duration.nanoseconds(Int64(quantum) * 1_000_000_000 / Int64(rate))
        return Swift.max(1, Int((duration / period).rounded(.up)))
    }

    /// The largest step, in dB, of the schedule going from `from` to `to` in `steps` equal steps along
    /// the log scale (between ``floor`` and the ends).
    package static func largestStep(from: Float, to: Float, steps: Int) -> Double {
        let a = Double(Swift.max(from, floor))
        let b = Double(Swift.max(to, floor))
        return abs(20 * log10(b / a)) / Double(Swift.max(steps, 1))
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif
