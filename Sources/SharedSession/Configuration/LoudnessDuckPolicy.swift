/// How a loudness duck (``DuckStyle/followLoudness(_:margin:)``) sets its depth: it keeps the
/// followed stream a margin of LU above the main stream, both measured as ITU-R BS.1770 loudness on
/// the render side, moving the depth within bounds and slowly enough not to pump.
///
/// ## What is measured
/// - **The followed stream** (a far end's voice, a feed clip): its loudness *while it speaks*, the
///   BS.1770 gated loudness (absolute gate −70 LUFS, relative gate −10 LU) of the 400 ms blocks of its
///   last ``window`` of activity, as the voice-activity detector hears it (``VoiceActivityPolicy``).
///   The pauses between words and turns do not count, so the figure holds across them.
/// - **The main stream**: the loudness of its source over the last ``window``, before the host's
///   volume and the other ducks.
///
/// Each 100 ms the level the margin asks for, `followed − margin − main`, is bounded to
/// ``deepest``...``shallowest`` (and to the unit's deepest level, ``UnitLimits/deepestDuckLevel``);
/// the level heard moves toward it once it is more than ``tolerance`` away. Small moves go at 0.4 dB a
/// second, both ways: music whose level drifts, a voice a little louder or quieter, move the movie at
/// most 0.8 dB within 2 s, heard as its own swell rather than the duck pumping. It moves at
/// ``deepeningRate`` once the level asked is more than 2.5 dB deeper (the movie got louder, a quieter
/// speaker: the voice is losing its margin) or the movie's last second is 3 LU over its window (it
/// stepped up), and at ``lighteningRate`` once it is more than 5 dB lighter or the movie's last second
/// is 3 LU under its window (it stepped down to a quiet passage), until it gets there; and at the
/// policy's rates while the window first fills. With the ``Window/momentary`` window every move is at
/// the policy's rates. The level is a ceiling relative to the source at the host's full volume, scaled
/// by the host's volume; the lower of it and the main stream's own gain (the host's volume and the
/// fixed ducks) is heard, so the ducks never compound and the host's volume turned down is heard at
/// once. While the followed stream is quiet the duck releases as a voice-activity duck
/// does (hold, then release), and comes back at the depth the two loudnesses ask for then.
public struct LoudnessDuckPolicy: Sendable, Hashable {
    /// The window both loudnesses are measured over.
    public enum Window: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// BS.1770's momentary loudness: the last 400 ms.
        case momentary
        /// EBU R 128's short-term loudness: the last 3 s.
        case shortTerm

        /// The 100 ms steps the window spans.
        var steps: Int {
            switch self {
            case .momentary: 4
            case .shortTerm: 30
            }
        }

        public var description: String { rawValue }
    }

    /// How many LU the followed stream is kept above the main stream when a duck names no margin.
    public let margin: Float
    /// The deepest the duck goes, in dB under the main stream's source at the host's volume.
    public let deepest: Float
    /// The shallowest the duck stays while it is active, in dB; 0 at most: a loudness duck never
    /// raises the main stream above the host's volume.
    public let shallowest: Float
    /// The window both loudnesses are measured over.
    public let window: Window
    /// How fast the depth goes down when the main stream gets louder, in dB per second.
    public let deepeningRate: Float
    /// How fast it comes back up when the main stream gets quieter, in dB per second.
    public let lighteningRate: Float
    /// How far, in LU, the depth asked for may be from the depth heard before the depth moves.
    public let tolerance: Float

    /// The most LU a margin may be: beyond it no bound a policy may set could hold it.
    public static let maximumMargin: Float = 40
    /// The deepest bound a policy may set, in dB.
    public static let maximumDepth: Float = -60

    /// Creates a loudness-duck policy.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue`, naming the value, for a margin that is not
    ///   from 0 through 40 LU; a bound that is not finite, above 0 dB or below −60 dB; `deepest` above
    ///   `shallowest` (the bounds reversed); a rate that is not above 0 and at most 1,000 dB/s; or a
    ///   tolerance that is not from 0 through 6 LU.
    public init(
        margin: Float = 10, deepest: Float = -30, shallowest: Float = 0, window: Window = .shortTerm,
        deepeningRate: Float = 20, lighteningRate: Float = 6, tolerance: Float = 0.5
    ) throws(SessionError) {
        try Self.checkMargin(margin)
        for (name, bound) in [("deepest", deepest), ("shallowest", shallowest)]
        where !bound.isFinite || bound > 0 || bound < Self.maximumDepth {
            throw .invalidValue(
                "loudness duck bound \(name) (dB)", Double(bound), fix: "give a depth from -60 through 0 dB")
        }
        guard deepest <= shallowest else {
            throw .invalidValue(
                "loudness duck bound deepest (dB)", Double(deepest),
                fix: "the bounds are reversed: deepest must be at or below shallowest (\(shallowest) dB)")
        }
        for (name, rate) in [("deepeningRate", deepeningRate), ("lighteningRate", lighteningRate)]
        where !rate.isFinite || rate <= 0 || rate > 1000 {
            throw .invalidValue(
                "loudness duck \(name) (dB/s)", Double(rate), fix: "give a rate above 0 and at most 1000 dB/s")
        }
        guard tolerance.isFinite, tolerance >= 0, tolerance <= 6 else {
            throw .invalidValue("loudness duck tolerance (LU)", Double(tolerance), fix: "give 0 through 6 LU")
        }
        self.margin = margin
        self.deepest = deepest
        self.shallowest = shallowest
        self.window = window
        self.deepeningRate = deepeningRate
        self.lighteningRate = lighteningRate
        self.tolerance = tolerance
    }

    /// Checks a margin in LU: finite, from 0 through ``maximumMargin``.
    static func checkMargin(_ margin: Float, file: String = #fileID, line: Int = #line) throws(SessionError) {
        guard margin.isFinite, margin >= 0, margin <= maximumMargin else {
            throw .invalidValue(
                "loudness duck margin (LU)", Double(margin),
                fix: "give 0 through 40 LU above the main stream, such as 10 for a voice", file: file, line: line)
        }
    }

    /// A voice 10 LU above the movie, the depth within 0 to −30 dB, short-term windows, down at
    /// 20 dB/s and up at 6 dB/s, moving once 0.5 LU off.
    ///
    /// - The margin: dialogue-mixing research gives commentary at least 10 LU above music and 15 LU
    ///   above ambience, and non-expert listeners prefer about 4 LU more than experts (Torcoli et
    ///   al., "Preferred Levels for Background Ducking to Produce Esthetically Pleasing Audio for TV
    ///   with Clear Speech", JAES 67(12), 2019). A host for a general audience may choose 14.
    /// - The window: measured in the loudness-duck tests on a movie that swells and fades twice a
    ///   second, the momentary window moved the depth with every swell; the short-term window held
    ///   it (figures in the LoudnessDucking article).
    /// - The rates: the main stream getting louder buries the voice, so the duck follows it down
    ///   within a second; coming back up is slower, so the movie does not pump.
    public static let `default` = try! LoudnessDuckPolicy()
}
