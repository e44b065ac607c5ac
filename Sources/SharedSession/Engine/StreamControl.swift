/// The control side of one open stream: what the session holds to change the stream's gain and
/// play state, handed back by ``AudioEngine/openStream(_:descriptor:source:gain:paused:)``.
///
/// A change is published to the stream's render side directly (for the built-in engines, a few
/// atomic stores into its ``StreamRenderer``), so the session never looks a stream up by id and no
/// engine lock is taken to duck the movie.
///
/// ## Implementation requirements
/// - **Never block.** Both methods return at once; the render side picks the change up at its next
///   cycle.
/// - **Outlive the connection.** An engine that reconnects to a sound server keeps the same control
///   working for the reopened stream: the session is never handed a new one.
/// - After the stream is closed, calls do nothing.
public protocol StreamControl: AnyObject, Sendable {
    /// Ramps the stream's gain linearly from the level reached to `gain` over `ramp`; a zero ramp is a
    /// step at the next frame. A ramp in progress is replaced, continuing from the level reached.
    func setGain(_ gain: Float, ramp: Duration)

    /// Pauses the stream (after a short fade, then no longer pulling its source, so it resumes where
    /// it stopped) or resumes it.
    func setPaused(_ paused: Bool)

    /// The meter of what this stream plays, for a voice-activity duck on another stream; the stream
    /// measures its output from the first call on. `nil` if the engine cannot measure it.
    func activityMeter() -> ActivityMeter?

    /// Makes the stream go down to `gain` (never above its own gain: the lowest level wins) while any
    /// of `meters` hears activity, per sample on the render side, getting there over `attack` and
    /// coming back over `release` once they are quiet. No meters: no voice-activity duck. The caller
    /// keeps the meters alive.
    func setActivityDuck(gain: Float, following meters: [ActivityMeter], attack: Duration, release: Duration)

    /// ``setActivityDuck(gain:following:attack:release:)`` with loudness ducks on top: while a meter
    /// whose slot in `loudness` is set hears activity, the stream goes down to the depth that keeps
    /// that source's loudness the slot's margin above the stream's own (``LoudnessDuckPolicy``), and
    /// never below `gain` while a voice-activity duck asks for it. The default implementation ignores
    /// the loudness part (an engine that cannot measure the stream's samples).
    func setActivityDuck(
        gain: Float, following meters: [ActivityMeter], loudness: LoudnessFollowing, attack: Duration,
        release: Duration)

    /// The loudness duck on this stream as its render side last measured it; `nil` when none is set
    /// (or the engine cannot measure).
    var loudnessDuck: LoudnessDuckReading? { get }

    /// The stream's output latency: the time from the start of a render cycle to the listener hearing
    /// the first frame rendered in it, as the engine last measured it (the offline engine: zero).
    /// `nil` while unknown: before the first cycle, or on an engine that cannot tell.
    var outputLatency: Duration? { get }
}

extension StreamControl {
    /// Unknown: an engine that cannot tell.
    public var outputLatency: Duration? { nil }

    /// Follows the meters' activity and ignores the loudness ducks.
    public func setActivityDuck(
        gain: Float, following meters: [ActivityMeter], loudness: LoudnessFollowing, attack: Duration,
        release: Duration
    ) {
        setActivityDuck(gain: gain, following: meters, attack: attack, release: release)
    }

    /// None: an engine that cannot measure the stream.
    public var loudnessDuck: LoudnessDuckReading? { nil }
}
