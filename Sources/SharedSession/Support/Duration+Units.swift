/// A `Duration` in the units the library's callers take: seconds for messages and JSON, whole
/// nanoseconds and milliseconds for timers and text. Written once here; `package`, so every product
/// of this package uses the same arithmetic and none of it becomes public API.
extension Duration {
    /// The duration in seconds (exact to a `Double`'s precision: the attoseconds are divided, not
    /// multiplied by an inexact 1e-18).
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The whole nanoseconds in the duration, rounded toward zero.
    package var inNanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// The whole milliseconds in the duration, rounded toward zero.
    package var inMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
