#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a duck that follows a stream's activity (``DuckStyle/followActivity(_:level:)``) hears speech:
/// the followed signal is active while its peak envelope is above ``threshold``, and stays active for
/// ``hold`` after it falls below, so the gaps between words do not bring the movie back. While active
/// the main stream goes down to the duck's level over ``attack``; after the hold it comes back over
/// ``release``.
public struct VoiceActivityPolicy: Sendable, Hashable {
    /// The level, in dBFS of the followed signal's peak, above which it counts as speech.
    public let threshold: Float
    /// How fast the main stream goes down once speech starts.
    public let attack: Duration
    /// How long speech counts as going on after the signal falls below the threshold.
    public let hold: Duration
    /// How fast the main stream comes back after the hold.
    public let release: Duration

    /// Creates a voice-activity policy.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` for a threshold that is not a finite number
    ///   below 0 dBFS, or a duration that is negative or longer than ten seconds.
    public init(
        threshold: Float = -40, attack: Duration = .milliseconds(20), hold: Duration = .milliseconds(1200),
        release: Duration = .milliseconds(400)
    ) throws(SessionError) {
        guard threshold.isFinite, threshold < 0 else {
            throw SessionError.invalidValue(
                "voice-activity threshold (dBFS)", Double(threshold), fix: "give a finite level below 0, such as -40")
        }
        try SessionError.checkFade(attack, name: "voice-activity attack")
        try SessionError.checkFade(hold, name: "voice-activity hold")
        try SessionError.checkFade(release, name: "voice-activity release")
        self.threshold = threshold
        self.attack = attack
        self.hold = hold
        self.release = release
    }

    /// ``threshold`` as a linear peak level, 0 through 1.
    public var linearThreshold: Float { Float(pow(10, Double(threshold) / 20)) }

    /// Speech above −40 dBFS, the movie down within 20 ms, held 1.2 s, back in 400 ms.
    ///
    /// Chosen from speech (`Benchmarks/Sources/VoiceTiming`, figures in BENCHMARKS.md): in espeak-ng
    /// speech in five voices at six paces, through Opus as a far end's voice arrives, the hold is longer
    /// than every pause the detector hears within a sentence (the longest a comma in deliberate speech)
    /// and between the sentences of a turn, so the movie stays down from a turn's first word to its
    /// last; after the last word it is back at its level 1.6 s later (hold plus release), inside the
    /// shortest silence counted as the end of a turn, 2 s. The old default (hold 300 ms) let the movie
    /// rise many times a minute while someone spoke, up to its full level.
    public static let `default` = try! VoiceActivityPolicy()
}
