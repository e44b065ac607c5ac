import Synchronization

/// The real-time render kernel of one stream: pulls its source, applies its gain per sample, and
/// writes or adds the result to an output buffer.
///
/// Three stages shape the gain, each a type of its own, composed here: the stream's own gain and its
/// de-click fade (``GainRamp``), the voice-activity duck (`ActivityFollower`) and the loudness duck
/// (`LoudnessFollower`). The lowest level wins: the ducks only ever lower the stream's own gain.
///
/// Both engines use it: the offline engine mixes several into one buffer, the PipeWire engine runs
/// one per `pw_stream` in that stream's process callback. The control side (``setGain(_:rampFrames:)``,
/// ``setPaused(_:)``) publishes through atomics; the render side (``render(into:frames:accumulate:suspended:)``)
/// reads them once per call and keeps the rest in plain stored properties that only it touches.
///
/// The render side never locks, allocates, logs or makes a system call; a test counts it.
///
/// A gain change that arrives while the stream is silent (paused or suspended, its de-click fade
/// finished) is applied as a step: nothing can be heard, so the stream resumes at its target instead
/// of ramping there audibly from an old level.
///
/// On a sound server the quantum rendered last is already queued when a gain change is picked up, so
/// the change is heard a quantum after the call. A renderer made with `shortensRampsByQueuedQuantum`
/// makes each new ramp shorter by that quantum (at most by half), so the level asked for is reached
/// the ramp's length after the call, as heard, rather than a quantum later.
public final class StreamRenderer: StreamControl, @unchecked Sendable {
    // @unchecked: the `var` properties below the "render side" mark are read and written only by
    // the render thread (one at a time, as the engines guarantee); the control side reaches the render
    // side only through the atomics, and the scratch pointer is touched only by the render side.

    /// The stream's source.
    public let source: any AudioSource
    /// The format the stream renders.
    public let format: AudioFormat
    /// Interleaved channels per frame.
    public let channels: Int
    /// Frames over which a pause or resume fades out or in, so neither clicks (5 ms at 48 kHz).
    public let declickFrames: Int
    /// Whether a new ramp is shortened by the quantum rendered last (see the type's discussion).
    public let shortensRampsByQueuedQuantum: Bool

    /// Hears what the stream plays, for voice-activity ducks of other streams that follow it; it
    /// measures from the first ``activityMeter()`` call on.
    private let playedActivity: ActivityMeter
    private let metersActivity = Atomic<Bool>(false)

    /// The most activity sources one stream follows.
    public static let maximumFollowed = AtomicSlots.count

    private let scratch: UnsafeMutablePointer<Float>
    private let scratchFrames: Int

    // Control side to render side: the stream's gain, the frames to ramp to it, and a generation
    // bumped after both are stored; paused.
    private let targetGainBits: Atomic<UInt32>
    private let rampFrameCount = Atomic<Int>(0)
    private let gainGeneration = Atomic<UInt64>(0)
    private let pausedFlag: Atomic<Bool>

    // Render side to control side.
    private let currentGainBits: Atomic<UInt32>
    private let pulledFrames = Atomic<Int>(0)
    private let silentFrames = Atomic<Int>(0)
    private let audibleFlag: Atomic<Bool>
    /// The route's latency the engine last measured for this stream, in nanoseconds; -1: not yet.
    private let latencyNanoseconds = Atomic<Int>(-1)

    // Render side only: the stages, and the frames of the last render call (the quantum already
    // queued when a new ramp is picked up).
    private var ramp: GainRamp
    private var seenGeneration: UInt64 = 0
    private var lastFrames = 0
    /// The voice-activity duck.
    private let activity = ActivityFollower()
    /// The loudness duck, fed the source before the gain.
    private let loudness: LoudnessFollower

    /// Creates the kernel for a stream that starts at `gain`, paused or playing.
    ///
    /// - Parameter shortensRampsByQueuedQuantum: True for an engine whose output is queued a quantum
    ///   ahead of what is heard (a sound server); false (the default) for one that renders on demand,
    ///   where a ramp of N frames ends N frames into the next render call.
    public init(
        source: any AudioSource, gain: Float, paused: Bool, format: AudioFormat = .standard,
        shortensRampsByQueuedQuantum: Bool = false
    ) {
        self.source = source
        self.format = format
        self.shortensRampsByQueuedQuantum = shortensRampsByQueuedQuantum
        self.channels = format.channels
        self.declickFrames = max(1, format.sampleRate / 200)
        self.scratchFrames = 1024
        self.scratch = .allocate(capacity: 1024 * format.channels)
        self.scratch.initialize(repeating: 0, count: 1024 * format.channels)
        self.targetGainBits = Atomic(gain.bitPattern)
        self.currentGainBits = Atomic(gain.bitPattern)
        self.pausedFlag = Atomic(paused)
        self.audibleFlag = Atomic(!paused)
        self.ramp = GainRamp(gain: gain, playing: !paused, declickFrames: declickFrames)
        self.playedActivity = ActivityMeter(format: format)
        self.loudness = LoudnessFollower(format: format)
    }

    deinit {
        scratch.deallocate()
    }

    // MARK: Control side

    /// Starts a linear ramp from wherever the gain is now to `gain` over `rampFrames` frames
    /// (0: a step at the next frame). A ramp in progress is replaced, continuing from the level reached.
    public func setGain(_ gain: Float, rampFrames: Int) {
        targetGainBits.store(gain.bitPattern, ordering: .relaxed)
        rampFrameCount.store(max(0, rampFrames), ordering: .relaxed)
        gainGeneration.add(1, ordering: .releasing)
    }

    /// Starts a linear ramp to `gain` over `ramp`, converted to frames at the stream's rate.
    public func setGain(_ gain: Float, ramp: Duration) {
        setGain(gain, rampFrames: format.frames(in: ramp))
    }

    /// Pauses (fading out over ``declickFrames`` and then no longer pulling the source, so playback
    /// resumes where it stopped) or resumes.
    public func setPaused(_ paused: Bool) {
        pausedFlag.store(paused, ordering: .releasing)
    }

    /// The meter of what this stream plays, for a voice-activity duck on another stream; the stream
    /// measures its output from this call on.
    public func activityMeter() -> ActivityMeter? {
        metersActivity.store(true, ordering: .relaxed)
        return playedActivity
    }

    /// Makes the stream go down to `gain` (or stay at its own gain if that is lower: the lowest level
    /// wins) while any of `meters` hears activity, getting there over `attack` and coming back over
    /// `release` once they are quiet (``VoiceActivityPolicy``). No meters: no voice-activity duck. At
    /// most ``maximumFollowed`` meters are followed.
    ///
    /// The render side holds the meters unretained: the caller keeps them alive for as long as this
    /// stream may render (the session keeps every meter it linked until it is deinitialised).
    public func setActivityDuck(gain: Float, following meters: [ActivityMeter], attack: Duration, release: Duration) {
        setActivityDuck(gain: gain, following: meters, loudness: .none, attack: attack, release: release)
    }

    /// ``setActivityDuck(gain:following:attack:release:)`` with loudness ducks: while a meter whose
    /// slot is set hears activity, the stream is held under the ceiling that keeps the meter's
    /// ``ActivityMeter/speechLoudness`` the slot's margin above the stream's source (measured here
    /// before the gain, over the policy's window), bounded to the slot's deepest and the policy's
    /// shallowest, moving at the policy's rates and scaled by the host's volume (its loudness stage,
    /// ``LoudnessFollowing/volume``). The lowest of the stream's own gain, `gain` and the ceiling wins.
    /// The meters of the slots must measure loudness (``ActivityMeter/measureLoudness()``).
    public func setActivityDuck(
        gain: Float, following meters: [ActivityMeter], loudness: LoudnessFollowing, attack: Duration,
        release: Duration
    ) {
        self.loudness.set(loudness, meterCount: min(meters.count, Self.maximumFollowed), frameRate: format.sampleRate)
        activity.set(gain: gain, following: meters, attack: attack, release: release, format: format)
    }

    /// Whether the stream measures what it plays for another stream's voice-activity duck (since an
    /// ``activityMeter()`` call): an engine that mixes several streams into one buffer renders such a
    /// stream without `accumulate`, since the meter measures what the call wrote.
    public var measuresActivity: Bool { metersActivity.load(ordering: .relaxed) }

    /// Whether the stream follows other streams' activity: an engine that renders several streams in
    /// turn renders these last, so they hear the others' activity in the same quantum.
    public var followsActivity: Bool { activity.isFollowing }

    /// The gain the render side reached at the end of its last call.
    public var currentGain: Float { Float(bitPattern: currentGainBits.load(ordering: .relaxed)) }

    /// The gain the last ``setGain(_:rampFrames:)`` asked for.
    public var targetGain: Float { Float(bitPattern: targetGainBits.load(ordering: .relaxed)) }

    /// Whether the stream is paused by its control side.
    public var isPaused: Bool { pausedFlag.load(ordering: .relaxed) }

    /// Whether the last render call produced sound-carrying frames (not paused, not suspended, or
    /// still fading out).
    public var isAudible: Bool { audibleFlag.load(ordering: .relaxed) }

    /// Frames pulled from the source so far.
    public var framesPulled: Int { pulledFrames.load(ordering: .relaxed) }

    /// Frames the source could not deliver while the stream was playing (it ran dry or ended).
    public var framesMissing: Int { silentFrames.load(ordering: .relaxed) }

    /// The stream's output latency as its engine last measured it (see
    /// ``publishOutputLatency(nanoseconds:)``); `nil` before the first measurement.
    public var outputLatency: Duration? {
        let nanoseconds = latencyNanoseconds.load(ordering: .relaxed)
        return nanoseconds < 0 ? nil : .nanoseconds(nanoseconds)
    }

    /// Called by the engine (on its render thread, or when it opens the stream) with the time from the
    /// start of a render cycle to the listener hearing the first frame rendered in it: the route's
    /// latency for this stream. One atomic store: real-time safe.
    public func publishOutputLatency(nanoseconds: Int) {
        latencyNanoseconds.store(max(0, nanoseconds), ordering: .relaxed)
    }

    /// The loudness duck as the render side last rendered it; `nil` when none is set. Its depth is the
    /// level heard under the stream's own gain at the end of the last render call: 0 once the duck has
    /// released.
    public var loudnessDuck: LoudnessDuckReading? { loudness.reading }

    // MARK: Render side

    /// Renders `frames` frames into `output`, adding to what is there when `accumulate` is true and
    /// overwriting it otherwise. `suspended` silences the stream the way a pause does (an engine-wide
    /// interruption or suspend). Any frame count works; long requests are rendered in chunks.
    ///
    /// `heardAt` is when the listener hears the first of the frames (nil: the engine cannot tell);
    /// the source is told it for each chunk it renders (``AudioSource/render(into:frames:heardAt:)``),
    /// offset by the frames before the chunk.
    public func render(
        into output: UnsafeMutablePointer<Float>, frames: Int, accumulate: Bool, suspended: Bool,
        heardAt: MonotonicInstant? = nil
    ) {
        let generation = gainGeneration.load(ordering: .acquiring)
        if generation != seenGeneration {
            seenGeneration = generation
            var length = rampFrameCount.load(ordering: .relaxed)
            if shortensRampsByQueuedQuantum { length &-= min(lastFrames, length / 2) }
            ramp.ramp(to: Float(bitPattern: targetGainBits.load(ordering: .relaxed)), frames: length)
        }
        // Silent since the last call: whatever is left of a ramp could not be heard, so it ends now
        // and the stream fades in at its target.
        ramp.skipRampIfSilent()
        let playing = !suspended && !pausedFlag.load(ordering: .acquiring)
        if let (attackFrames, releaseFrames) = activity.pickUp() {
            loudness.pickUp(
                hasMeters: activity.meters.0 != 0, heard: activity.duck.mix > 0, attackFrames: attackFrames,
                releaseFrames: releaseFrames)
        }
        let following = activity.readSpans()
        var done = 0
        while done < frames {
            let chunk = min(frames &- done, scratchFrames)
            let chunkHeardAt = heardAt.map {
                MonotonicInstant(nanoseconds: $0.nanoseconds &+ Int64(done) &* 1_000_000_000 / Int64(format.sampleRate))
            }
            renderChunk(
                into: output + done &* channels, frames: chunk, offset: done, accumulate: accumulate, playing: playing,
                following: following, heardAt: chunkHeardAt)
            done = done &+ chunk
        }
        lastFrames = frames
        currentGainBits.store(ramp.gain.bitPattern, ordering: .relaxed)
        audibleFlag.store(playing || !ramp.isSilent, ordering: .relaxed)
        if metersActivity.load(ordering: .relaxed), !accumulate {
            playedActivity.measure(output, frames: frames, channels: channels)
        }
    }

    @inline(__always)
    private func renderChunk(
        into output: UnsafeMutablePointer<Float>, frames: Int, offset: Int, accumulate: Bool, playing: Bool,
        following: Bool, heardAt: MonotonicInstant?
    ) {
        // Pull only the frames that will be heard: all of them while playing, and while fading out
        // only up to the frame where the fade reaches zero, so a resume continues from there.
        let wanted = ramp.framesHeard(of: frames, playing: playing)
        // Overwriting: the source renders straight into the output and the gain is applied in place;
        // adding: it renders into the scratch buffer, which is then added.
        let input = accumulate ? scratch : output
        var pulled = 0
        if wanted > 0 {
            pulled = max(0, min(wanted, source.render(into: input, frames: wanted, heardAt: heardAt)))
            pulledFrames.add(pulled, ordering: .relaxed)
            if pulled < wanted, playing {
                silentFrames.add(wanted &- pulled, ordering: .relaxed)
            }
        }
        if pulled < frames {
            (input + pulled &* channels).update(repeating: 0, count: (frames &- pulled) &* channels)
        }
        // The loudness duck: the main's loudness measured on its source, the level asked for each
        // 100 ms, and the level heard moved toward it over this chunk.
        let loudness = self.loudness.isEngaged
        if loudness {
            self.loudness.begin()
            if playing {
                self.loudness.measure(
                    input, frames: frames, channels: channels, meters: activity.meters, heard: activity.duck.mix > 0,
                    gain: ramp.gain)
            }
            self.loudness.move(frames: frames, heard: activity.duck.mix > 0, voiced: activity.isVoiced)
        }

        // Steady playback (no ramp, no fade, nothing followed: almost every cycle): one constant
        // factor, a loop the compiler vectorises. The general loop below gives the same samples.
        if playing, !following, ramp.isSteady {
            let factor = ramp.gain * ramp.declick
            let count = frames &* channels
            if accumulate {
                for index in 0..<count { output[index] += scratch[index] * factor }
            } else if factor != 1 {
                for index in 0..<count { output[index] *= factor }
            }
            return
        }

        // The loudness duck's ceiling, from the chunk's start to its end: the level and the volume move
        // at most a few dB a second (the volume over the attack or the release), so a line between the
        // two is inaudible as a line.
        let ceilingFrom = self.loudness.factorFrom
        let ceilingSlope = frames > 0 ? (self.loudness.factorTo - ceilingFrom) / Float(frames) : 0
        var ramp = self.ramp
        var duck = activity.duck
        let channels = self.channels
        var index = 0
        var heard = ramp.gain
        for frame in 0..<frames {
            if following { duck.advance(active: activity.isActive(at: offset &+ frame)) }
            let gain = ramp.advance(playing: playing)
            // The lowest level wins: the voice-activity duck only ever lowers the stream's own gain.
            var floor = min(gain, duck.ducked)
            if loudness { floor = min(floor, ceilingFrom + ceilingSlope * Float(frame)) }
            heard = duck.mix > 0 ? gain + duck.mix * (floor - gain) : gain
            let factor = heard * ramp.declick
            for _ in 0..<channels {
                let value = input[index] * factor
                output[index] = accumulate ? output[index] + value : value
                index &+= 1
            }
        }
        self.ramp = ramp
        activity.duck = duck
        if loudness { self.loudness.publish(heard: heard, gain: ramp.gain) }
    }
}
