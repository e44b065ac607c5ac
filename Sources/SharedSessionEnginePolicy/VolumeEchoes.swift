/// Tells the engine's own writes to an adopted node's volume from a user's (`wpctl set-volume`, a
/// desktop mixer): the daemon reports every change of the node's `Props`, ours included, some of them
/// merged (only the last of several writes in one cycle is reported).
///
/// Every value written is remembered for ``window``; a report of a value written within it is ours
/// (and the writes before it are forgotten: they were overtaken), any other value is the user's.
/// A plain value, tested without a daemon.
package struct VolumeEchoes: Sendable {
    /// How long a written value may take to come back in a report.
    package static let window = Duration.seconds(2)
    /// Two volumes closer than this are the same (they travel as 32-bit floats).
    package static let tolerance: Float = 1e-5

    private var written: [(volume: Float, at: ContinuousClock.Instant)] = []

    /// What a report was.
    package enum Report: Equatable {
        /// A value the engine wrote.
        case own
        /// A value the engine did not write: someone else set it.
        case external(volume: Float)
    }

    /// Notes a write of `volume` at `now`. (A mute is not followed: the engine writes one only to pause,
    /// and leaves a user's mute alone.)
    package mutating func wrote(_ volume: Float, at now: ContinuousClock.Instant) {
        written.removeAll { now - $0.at > Self.window }
        written.append((volume, now))
        if written.count > 256 { written.removeFirst(written.count - 256) }
    }

    /// Reads a report of the node's volume (the channels' mean).
    package mutating func report(volume: Float, at now: ContinuousClock.Instant) -> Report {
        written.removeAll { now - $0.at > Self.window }
        if let index = written.lastIndex(where: { abs($0.volume - volume) <= Self.tolerance }) {
            written.removeFirst(index)
            return .own
        }
        return .external(volume: volume)
    }

    /// Forgets every write (the node is gone).
    package mutating func reset() { written.removeAll() }
}
