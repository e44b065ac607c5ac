import Synchronization

/// The real-time render kernel of one stream: pulls its source, ramps its gain per sample, and
/// writes or adds the result to an output buffer.
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
    private let activity: ActivityMeter
    private let metersActivity = Atomic<Bool>(false)

    /// The most activity sources one stream follows.
    public static let maximumFollowed = 4

    private let scratch: UnsafeMutablePointer<Float>
    private let scratchFrames: Int

    // Control side to render side.
    private let targetGainBits: Atomic<UInt32>
    private let rampFrameCount = Atomic<Int>(0)
    private let gainGeneration = Atomic<UInt64>(0)
    private let pausedFlag: Atomic<Bool>
    // The voice-activity duck: meters as unretained pointers (kept alive by whoever set them, see
    // ``setActivityDuck(gain:following:attack:release:)``), the ducked gain and the ramp lengths.
    private let followed0 = Atomic<UInt>(0)
    private let followed1 = Atomic<UInt>(0)
    private let followed2 = Atomic<UInt>(0)
    private let followed3 = Atomic<UInt>(0)
    private let activityGainBits = Atomic<UInt32>(Float(1).bitPattern)
    private let activityAttackFrames = Atomic<Int>(960)
    private let activityReleaseFrames = Atomic<Int>(19_200)
    private let followGeneration = Atomic<UInt64>(0)

    // Render side to control side.
    private let currentGainBits: Atomic<UInt32>
    private let pulledFrames = Atomic<Int>(0)
    private let silentFrames = Atomic<Int>(0)
    private let audibleFlag: Atomic<Bool>
    /// The route's latency the engine last measured for this stream, in nanoseconds; -1: not yet.
    private let latencyNanoseconds = Atomic<Int>(-1)

    // Render side only.
    private var gain: Float
    private var target: Float
    // A ramp is computed from its start, not accumulated sample by sample, so it never overshoots.
    private var rampStart: Float = 0
    private var rampLength = 0
    private var rampPosition = 0
    private var seenGeneration: UInt64 = 0
    private var runGain: Float
    // Frames of the last render call: the quantum already queued when a new ramp is picked up.
    private var lastFrames = 0
    // The voice-activity duck, render side: the meters followed, the last block read from each (a
    // block read twice is stale: its writer stopped), the ducked gain, and how far the stream is into
    // the duck (0: not at all, 1: at min(gain, ducked gain)), moving over the attack and the release.
    private var meters: (UInt, UInt, UInt, UInt) = (0, 0, 0, 0)
    private var meterBlocks: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var seenFollowGeneration: UInt64 = 0
    private var activityGain: Float = 1
    private var activityAttackStep: Float = 1
    private var activityReleaseStep: Float = 1
    private var activityMix: Float = 0
    // The ducked gain heard now: a new one (the host changed its volume during speech) is reached over
    // the attack going down and the release going up, never stepped.
    private var duckedNow: Float = 1
    private var duckedStep: Float = 0
    private var spans: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// The loudness duck: its own stage, fed the source before the gain.
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
        self.gain = gain
        self.target = gain
        self.runGain = paused ? 0 : 1
        self.activity = ActivityMeter(format: format)
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
        return activity
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
        let pointers = meters.prefix(Self.maximumFollowed).map {
            UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque())
        }
        followed0.store(pointers.count > 0 ? pointers[0] : 0, ordering: .relaxed)
        followed1.store(pointers.count > 1 ? pointers[1] : 0, ordering: .relaxed)
        followed2.store(pointers.count > 2 ? pointers[2] : 0, ordering: .relaxed)
        followed3.store(pointers.count > 3 ? pointers[3] : 0, ordering: .relaxed)
        // Unfollowed, the stream comes back from the ducked gain it had: only the duck's depth moves.
        if !pointers.isEmpty { activityGainBits.store(gain.bitPattern, ordering: .relaxed) }
        activityAttackFrames.store(max(1, format.frames(in: attack)), ordering: .relaxed)
        activityReleaseFrames.store(max(1, format.frames(in: release)), ordering: .relaxed)
        followGeneration.add(1, ordering: .releasing)
    }

    /// Whether the stream measures what it plays for another stream's voice-activity duck (since an
    /// ``activityMeter()`` call): an engine that mixes several streams into one buffer renders such a
    /// stream without `accumulate`, since the meter measures what the call wrote.
    public var measuresActivity: Bool { metersActivity.load(ordering: .relaxed) }

    /// Whether the stream follows other streams' activity: an engine that renders several streams in
    /// turn renders these last, so they hear the others' activity in the same quantum.
    public var followsActivity: Bool { followed0.load(ordering: .relaxed) != 0 }

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

    /// The loudness duck if it changed since the last call that reported one: it was set or removed,
    /// its depth moved by ``loudnessReportStep`` dB or more, or it came back to 0 (released). For the
    /// engine's control side, to report ``EngineEvent/loudnessDuckChanged(stream:reading:)``; one
    /// caller at a time.
    public func takeLoudnessDuckChange() -> (changed: Bool, reading: LoudnessDuckReading?) {
        loudness.takeChange(step: Self.loudnessReportStep)
    }

    /// How far, in dB, a loudness duck's depth moves before it is reported again.
    public static let loudnessReportStep: Float = 1

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
            target = Float(bitPattern: targetGainBits.load(ordering: .relaxed))
            var length = rampFrameCount.load(ordering: .relaxed)
            if shortensRampsByQueuedQuantum { length &-= min(lastFrames, length / 2) }
            rampStart = gain
            rampLength = length
            rampPosition = 0
            if length == 0 { gain = target }
        }
        // Silent since the last call: whatever is left of a ramp could not be heard, so it ends now
        // and the stream fades in at its target.
        if runGain == 0, rampPosition < rampLength {
            rampPosition = rampLength
            gain = target
        }
        let playing = !suspended && !pausedFlag.load(ordering: .acquiring)
        let following = readFollowed()
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
        currentGainBits.store(gain.bitPattern, ordering: .relaxed)
        audibleFlag.store(playing || runGain > 0, ordering: .relaxed)
        if metersActivity.load(ordering: .relaxed), !accumulate {
            activity.measure(output, frames: frames, channels: channels)
        }
    }

    /// Picks up a new voice-activity duck and reads the active spans the followed meters published for
    /// this quantum. Returns whether anything is followed or the activity gain is still moving.
    @inline(__always)
    private func readFollowed() -> Bool {
        let generation = followGeneration.load(ordering: .acquiring)
        if generation != seenFollowGeneration {
            seenFollowGeneration = generation
            meters = (
                followed0.load(ordering: .relaxed), followed1.load(ordering: .relaxed),
                followed2.load(ordering: .relaxed), followed3.load(ordering: .relaxed)
            )
            let attackFrames = Float(activityAttackFrames.load(ordering: .relaxed))
            let releaseFrames = Float(activityReleaseFrames.load(ordering: .relaxed))
            activityGain = Float(bitPattern: activityGainBits.load(ordering: .relaxed))
            activityAttackStep = 1 / attackFrames
            activityReleaseStep = 1 / releaseFrames
            if activityMix == 0 { duckedNow = activityGain }
            duckedStep = abs(activityGain - duckedNow) / (activityGain < duckedNow ? attackFrames : releaseFrames)
            loudness.pickUp(
                hasMeters: meters.0 != 0, heard: activityMix > 0, attackFrames: attackFrames,
                releaseFrames: releaseFrames)
        }
        (spans.0, spans.1, meterBlocks.0) = Self.span(of: meters.0, after: meterBlocks.0)
        (spans.2, spans.3, meterBlocks.1) = Self.span(of: meters.1, after: meterBlocks.1)
        (spans.4, spans.5, meterBlocks.2) = Self.span(of: meters.2, after: meterBlocks.2)
        (spans.6, spans.7, meterBlocks.3) = Self.span(of: meters.3, after: meterBlocks.3)
        return meters.0 != 0 || activityMix > 0
    }

    @inline(__always)
    private static func span(of meter: UInt, after lastBlock: UInt64) -> (Int, Int, UInt64) {
        guard meter != 0, let pointer = UnsafeRawPointer(bitPattern: meter) else { return (0, 0, lastBlock) }
        let (start, end, block) = Unmanaged<ActivityMeter>.fromOpaque(pointer)._withUnsafeGuaranteedRef {
            $0.activeSpan()
        }
        // The same block as last time: its writer has not measured since (a closed or stopped
        // stream), so it says nothing about now.
        return block == lastBlock ? (0, 0, block) : (start, end, block)
    }

    @inline(__always)
    private func isActive(at frame: Int) -> Bool {
        (frame >= spans.0 && frame < spans.1) || (frame >= spans.2 && frame < spans.3)
            || (frame >= spans.4 && frame < spans.5) || (frame >= spans.6 && frame < spans.7)
    }

    @inline(__always)
    private func renderChunk(
        into output: UnsafeMutablePointer<Float>, frames: Int, offset: Int, accumulate: Bool, playing: Bool,
        following: Bool, heardAt: MonotonicInstant?
    ) {
        let runStep = 1 / Float(declickFrames)
        // Pull only the frames that will be heard: all of them while playing, and while fading out
        // only up to the frame where the fade reaches zero, so a resume continues from there.
        let wanted: Int
        if playing {
            wanted = frames
        } else {
            wanted = min(frames, Int((runGain / runStep).rounded(.up)))
        }
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
                    input, frames: frames, channels: channels, meters: meters, heard: activityMix > 0, gain: gain)
            }
            self.loudness.move(
                frames: frames, heard: activityMix > 0,
                voiced: spans.1 != 0 || spans.3 != 0 || spans.5 != 0 || spans.7 != 0)
        }

        // Steady playback (no ramp, no fade, nothing followed: almost every cycle): one constant
        // factor, a loop the compiler vectorises. The general loop below gives the same samples.
        if playing, !following, runGain >= 1, rampPosition >= rampLength {
            let factor = gain * runGain
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
        var gain = self.gain
        var runGain = self.runGain
        var rampPosition = self.rampPosition
        let rampLength = self.rampLength
        let rampStart = self.rampStart
        let rampSpan = target - rampStart
        let inverseLength = rampLength > 0 ? 1 / Float(rampLength) : 0
        let target = self.target
        let channels = self.channels
        var activityMix = self.activityMix
        var ducked = duckedNow
        let duckedTarget = activityGain
        let duckedStep = self.duckedStep
        let attackStep = activityAttackStep
        let releaseStep = activityReleaseStep
        var index = 0
        var heard = gain
        for frame in 0..<frames {
            if following {
                if ducked != duckedTarget {
                    ducked =
                        ducked < duckedTarget
                        ? min(duckedTarget, ducked + duckedStep) : max(duckedTarget, ducked - duckedStep)
                }
                if isActive(at: offset &+ frame) {
                    if activityMix < 1 { activityMix = min(1, activityMix + attackStep) }
                } else if activityMix > 0 {
                    activityMix = max(0, activityMix - releaseStep)
                }
            }
            if rampPosition < rampLength {
                rampPosition &+= 1
                gain =
                    rampPosition == rampLength ? target : rampStart + rampSpan * (Float(rampPosition) * inverseLength)
            }
            if playing {
                if runGain < 1 { runGain = min(1, runGain + runStep) }
            } else if runGain > 0 {
                runGain = max(0, runGain - runStep)
            }
            // The lowest level wins: the voice-activity duck only ever lowers the stream's own gain.
            var floor = min(gain, ducked)
            if loudness { floor = min(floor, ceilingFrom + ceilingSlope * Float(frame)) }
            heard = activityMix > 0 ? gain + activityMix * (floor - gain) : gain
            let factor = heard * runGain
            for _ in 0..<channels {
                let value = input[index] * factor
                output[index] = accumulate ? output[index] + value : value
                index &+= 1
            }
        }
        self.gain = gain
        self.runGain = runGain
        self.rampPosition = rampPosition
        self.activityMix = activityMix
        self.duckedNow = ducked
        if loudness { self.loudness.publish(heard: heard, gain: gain) }
    }
}
