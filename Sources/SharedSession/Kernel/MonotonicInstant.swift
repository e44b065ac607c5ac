/// A point on the system's monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds.
///
/// It is the clock a sound server stamps its cycles with (PipeWire's `pw_time.now`) and the one a
/// display loop reads its frame times from (GLib's `g_get_monotonic_time`, SDL's performance
/// counter, a Wayland presentation feedback or a `VK_GOOGLE_display_timing` on the monotonic clock),
/// so a player can ask a source's clock for the instant a frame will be shown without converting
/// between clocks. On Linux it is also the clock of Swift's `SuspendingClock`.
public struct MonotonicInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin (the machine's boot, not counting time suspended).
    public var nanoseconds: Int64

    /// The instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The clock's origin: an instant before anything happened, for a timeline of one's own (the
    /// offline engine's, in a deterministic test).
    public static let zero = MonotonicInstant(nanoseconds: 0)

    /// The instant now. It reads the clock through the vDSO, without a system call.
    public static var now: MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    /// The instant `duration` later (earlier for a negative one), to the nanosecond.
    public static func + (instant: MonotonicInstant, duration: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: instant.nanoseconds + duration.inNanoseconds)
    }

    /// The instant `duration` earlier, to the nanosecond.
    public static func - (instant: MonotonicInstant, duration: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: instant.nanoseconds - duration.inNanoseconds)
    }

    /// The time from `earlier` to `later` (negative when `later` is earlier).
    public static func - (later: MonotonicInstant, earlier: MonotonicInstant) -> Duration {
        .nanoseconds(later.nanoseconds - earlier.nanoseconds)
    }

    /// Whether `lhs` is earlier than `rhs`.
    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The instant in milliseconds since the clock's origin.
    public var description: String {
        let milliseconds = Double(nanoseconds) / 1e6
        return "monotonic \(milliseconds) ms"
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
