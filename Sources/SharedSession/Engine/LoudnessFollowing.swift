/// What a loudness duck asks of one followed source: keep it `margin` LU above the stream, going no
/// deeper than `deepest` dB (the policy's bound, or its unit's deepest level if that is shallower).
public struct LoudnessSlot: Sendable, Hashable {
    /// LU the source is kept above the stream.
    public var margin: Float
    /// The deepest the stream goes for it, in dB under its source at the host's volume.
    public var deepest: Float

    /// Creates a slot.
    public init(margin: Float, deepest: Float) {
        self.margin = margin
        self.deepest = deepest
    }
}

/// The loudness ducks on top of a stream's voice-activity duck
/// (``StreamControl/setActivityDuck(gain:following:loudness:attack:release:)``): for each followed
/// meter, in the same order, the slot of the loudness duck that follows it, or `nil` if only a
/// voice-activity duck does; the policy that sets the windows, the shallowest bound and the rates; and
/// the host's volume.
///
/// The level a loudness duck asks is a ceiling on the stream relative to its source at full volume,
/// scaled by `volume`: turning the host's volume down is heard at once by its full amount, turning it
/// up never lifts the stream above the followed source minus the margin (at volume 1, the most). The
/// stream's own gain, which carries the fixed ducks, is never raised: the lower of the two is heard.
public struct LoudnessFollowing: Sendable, Hashable {
    /// One per followed meter.
    public var slots: [LoudnessSlot?]
    /// The windows, the shallowest bound, the rates and the tolerance.
    public var policy: LoudnessDuckPolicy
    /// The host's volume for the stream (0 through 1), which scales the loudness duck's ceiling.
    public var volume: Float

    /// Creates the loudness part of an activity duck.
    public init(slots: [LoudnessSlot?], policy: LoudnessDuckPolicy, volume: Float = 1) {
        self.slots = slots
        self.policy = policy
        self.volume = volume
    }

    /// No loudness duck.
    public static let none = LoudnessFollowing(slots: [], policy: .default)

    /// Whether any followed meter has a loudness duck.
    public var isActive: Bool { slots.contains { $0 != nil } }
}

/// A loudness duck as the render side of the stream it ducks last measured it.
public struct LoudnessDuckReading: Sendable, Hashable, CustomStringConvertible {
    /// The depth heard, in dB under the stream's own gain (0: not lowered): what the ducks that follow
    /// activity take off the stream at the end of the last render call, 0 once the duck has released.
    public var depth: Float
    /// The stream's loudness without the loudness duck (its source at its own gain), in LUFS over the
    /// policy's window; `nil` while silent.
    public var mainLoudness: Float?
    /// The loudness of the followed source while it speaks, in LUFS (the loudest requirement of those
    /// followed, as margin + the main loudness it asks for); `nil` before it has spoken.
    public var sourceLoudness: Float?

    /// Creates a reading.
    public init(depth: Float, mainLoudness: Float?, sourceLoudness: Float?) {
        self.depth = depth
        self.mainLoudness = mainLoudness
        self.sourceLoudness = sourceLoudness
    }

    /// The difference the listener hears while the duck is active: source − (main + depth), in LU.
    public var difference: Float? {
        guard let mainLoudness, let sourceLoudness else { return nil }
        return sourceLoudness - (mainLoudness + depth)
    }

    public var description: String {
        var text = "depth \(depth) dB"
        if let mainLoudness { text += ", main \(mainLoudness) LUFS" }
        if let sourceLoudness { text += ", source \(sourceLoudness) LUFS" }
        return text
    }
}
