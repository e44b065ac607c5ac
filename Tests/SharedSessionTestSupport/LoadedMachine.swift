/// How a test bounds a time it reads off the wall clock.
///
/// A test asserts what a user would notice: a player not back, a duck that never comes, a ramp heard as
/// a step. The times in between (from a host's death to its player heard back, from a duck request to
/// the level) are figures of the machine as much as of the library: the host, its watchdog, the
/// daemon's main loop and the tests' own threads are not real-time, and on CI's 2 cores beside its
/// side builds one of them is scheduled late now and then. So a test's bound on such a time is the
/// quiet machine's figure times ``factor``, the figure itself is printed as a `[measure]` line, and
/// `Benchmarks/run` measures it over many runs (median and worst, gated on medians).
/// WorkingOnSharedSession lists which bounds are behaviour and which are figures.
package enum LoadedMachine {
    /// What a loaded machine is allowed over the quiet figure.
    package static let factor = 5

    /// The bound a test keeps for a time whose quiet figure is `quiet`.
    package static func bound(_ quiet: Duration) -> Duration { quiet * factor }

    /// ``bound(_:)`` in milliseconds.
    package static func bound(milliseconds quiet: Double) -> Double { quiet * Double(factor) }
}
