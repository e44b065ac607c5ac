import Synchronization

/// The loudness duck of one stream, the stage of ``StreamRenderer`` that decides how loud the stream is
/// heard while a followed voice speaks: it measures the stream's source, asks each 100 ms for the level
/// that keeps the voice its margin above it, and moves toward that level at the policy's rates.
///
/// The level is a ceiling on the stream as heard, relative to its source at the host's full volume
/// (host volume 1), times the host's volume: `volume × level`. The stream's own gain (the host's
/// volume × the fixed ducks, ramped by the session) is never raised, so with a fixed duck the lower of
/// the two is heard (``StreamRenderer`` takes the minimum per sample): a fixed duck taken or released
/// over a loudness duck moves the stream along the fixed duck's own ramp, and the loudness duck's level
/// does not move because of it. The host's volume scales the ceiling, so turning it down is heard at
/// once by its full amount and turning it up never lifts the stream above the voice minus the margin.
///
/// Control side: ``set(_:volume:frameRate:)`` stores atomics; ``StreamRenderer`` picks them up with its
/// own generation counter and calls the render-side methods, which never lock or allocate.
final class LoudnessFollower: @unchecked Sendable {
    // @unchecked: the `var` properties are touched only by the render thread (see StreamRenderer); the
    // control side reaches them only through the atomics.

    // Control side to render side. Each slot packed: the margin's bits high (NaN: no slot), the
    // deepest level's low.
    private let packedSlots = AtomicSlots(empty: LoudnessFollower.pack(nil))
    private let windowSteps = Atomic<Int>(30)
    private let shallowestBits = Atomic<UInt32>(Float(0).bitPattern)
    private let deepenBits = Atomic<UInt32>(Float(20).bitPattern)
    private let lightenBits = Atomic<UInt32>(Float(6).bitPattern)
    private let driftBits = Atomic<UInt32>(Float(0).bitPattern)
    private let toleranceBits = Atomic<UInt32>(Float(0.5).bitPattern)
    private let volumeBits = Atomic<UInt32>(Float(1).bitPattern)

    // Render side to control side: on, the depth heard (dB under the stream's own gain), the main's
    // loudness at its own gain and the source's.
    private let onFlag = Atomic<Bool>(false)
    private let depthBits = Atomic<UInt32>(Float(0).bitPattern)
    private let mainBits = Atomic<UInt32>((-Float.infinity).bitPattern)
    private let sourceBits = Atomic<UInt32>((-Float.infinity).bitPattern)

    /// The meter of the stream's source, made by the first ``set(_:meterCount:frameRate:)`` that sets a
    /// slot (nil until then): a stream never ducked by loudness has none. Retained here until the
    /// follower is deinitialised; the render side holds it unretained.
    private let madeMeter = Atomic<Unmanaged<LoudnessMeter>?>(nil)
    private let format: AudioFormat

    // Render side only.
    private var meter: Unmanaged<LoudnessMeter>?
    private var slots: ((Float, Float), (Float, Float), (Float, Float), (Float, Float)) = (
        (.nan, 0), (.nan, 0), (.nan, 0), (.nan, 0)
    )
    private(set) var isActive = false
    private var steps = 30
    private var shallowest: Float = 0
    private var deepenPerFrame: Float = 0
    private var lightenPerFrame: Float = 0
    private var driftPerFrame: Float = 0
    private var tolerance: Float = 0.5
    /// The level in dB under the source at full volume: heard now, and the bounded one asked for.
    private var levelNow: Float = 0
    private var levelAsked: Float = 0
    private var levelMoving = false
    /// The level asked was more than ``driftBand`` under the level heard, or ``lighteningBand`` over
    /// it: the level moves at the policy's rates until it gets there, not at ``driftRate``.
    private var levelCatchingUp = false
    /// The main's loudness window was not yet full at the last step: the level asked moves as it
    /// fills, and is followed at the policy's rates until the level gets there once the window is full.
    private var warming = false
    private var windowFull = false
    /// Steps (100 ms) left in which the level rises at the policy's rate after a rise beyond
    /// ``lighteningBand``: a movie that stepped down is measured over a whole window, and the level
    /// asked keeps rising until the window holds only the quieter part.
    private var lighteningSteps = 0
    /// The same after the movie stepped up: its last second more than ``stepDown`` over its window.
    private var deepeningSteps = 0
    /// Set when the duck starts: its first level asked is reached over ``startDuration`` (as a fixed
    /// duck's fade), not at the policy's rate, so a duck taken under a fixed one or at a first word
    /// needs no climb down of a second or more. `startStep`: dB a frame while it gets there (0: none).
    private var starting = false
    private var startStep: Float = 0
    private let startFrames: Float
    /// The host's volume the level is scaled by: asked, and heard now (moving over the voice-activity
    /// attack down and release up, never stepped).
    private var volume: Float = 1
    private var volumeNow: Float = 1
    private var volumeStep: Float = 0
    /// Per slot, the source's loudness the level is set from: during a duck it follows the source's
    /// loudness down at once (the movie goes down for a quieter voice) and up at most
    /// ``sourceRelaxPerStep`` a step, so a voice that gets louder in the middle of a turn does not bring
    /// the movie up between its words.
    private var sourceHeld: (Float, Float, Float, Float) = (-.infinity, -.infinity, -.infinity, -.infinity)
    /// The ceiling's factor at the start and the end of the chunk being rendered.
    private(set) var factorFrom: Float = 1
    private(set) var factorTo: Float = 1

    /// How far a source's loudness may rise in a 100 ms step while it ducks the stream, in LU: 0.25 LU a
    /// second, so the movie never rises by a dB within 2 s because the voice got louder.
    static let sourceRelaxPerStep: Float = 0.025

    /// How many LU the voice's last 2 s of speech (``ActivityMeter/recentSpeechLoudness``) must be under
    /// its last 10 s for the level to be set from the 2 s: a quieter speaker, not a quieter phrase.
    static let quieterSpeaker: Float = 1.5

    /// How fast, in dB per second, the level follows the level asked while the two are within
    /// ``driftBand`` of each other, both ways: music whose level drifts, or a voice a little louder or
    /// quieter, moves the movie at most 0.8 dB within 2 s, heard as the movie's own swell.
    static let driftRate: Float = 0.4

    /// How far, in dB, the level asked may be from the level heard before the level moves at the
    /// policy's rates (``LoudnessDuckPolicy/deepeningRate``, ``LoudnessDuckPolicy/lighteningRate``)
    /// until it gets there: more than the ±1.7 LU by which the short-term loudness of music drifting
    /// ±2 dB over 9 s moves, so a drift never does; a step of the movie, a quieter speaker and a duck's
    /// start always do.
    static let driftBand: Float = 2.5

    /// How far, in dB, the level asked may be above the level heard before the level rises at
    /// ``LoudnessDuckPolicy/lighteningRate``: a movie that got quieter by more than this is a step of
    /// the movie, not a drift.
    static let lighteningBand: Float = 5

    /// How many LU the movie's last second (``stepDetectionSteps``) must be under its window for the
    /// movie to have stepped down: drifting music's last second stays within about 1 LU of its 3 s.
    static let stepDown: Float = 3
    static let stepDetectionSteps = 10

    /// How long a duck takes to reach the first level it asks.
    static let startDuration: Duration = .milliseconds(150)

    init(format: AudioFormat) {
        self.format = format
        startFrames = Float(max(1, format.frames(in: Self.startDuration)))
    }

    deinit { madeMeter.load(ordering: .acquiring)?.release() }

    // MARK: Control side

    /// Publishes the slots (one per followed meter, in order), the policy and the host's volume; the
    /// render side picks them up at the renderer's next generation.
    func set(_ following: LoudnessFollowing, meterCount: Int, frameRate: Int) {
        if following.isActive { makeMeter() }
        packedSlots.store(following.slots.prefix(min(meterCount, AtomicSlots.count)).map(Self.pack))
        let policy = following.policy
        let rate = Float(frameRate)
        windowSteps.store(policy.window.steps, ordering: .relaxed)
        shallowestBits.store(policy.shallowest.bitPattern, ordering: .relaxed)
        deepenBits.store((policy.deepeningRate / rate).bitPattern, ordering: .relaxed)
        lightenBits.store((policy.lighteningRate / rate).bitPattern, ordering: .relaxed)
        // The momentary window is asked for to follow the movie closely: every move at the policy's rates.
        let drift = policy.window == .momentary ? Float.infinity : Self.driftRate / rate
        driftBits.store(drift.bitPattern, ordering: .relaxed)
        toleranceBits.store(policy.tolerance.bitPattern, ordering: .relaxed)
        volumeBits.store(max(0, following.volume).bitPattern, ordering: .relaxed)
    }

    /// Makes the meter, once: before the slots that use it are published, so the render side that
    /// picks them up finds it.
    private func makeMeter() {
        guard madeMeter.load(ordering: .acquiring) == nil,
            let made = try? LoudnessMeter(
                channelWeights: [Double](repeating: 1, count: max(1, min(16, format.channels))),
                sampleRate: format.sampleRate, integrates: false)
        else { return }
        let retained = Unmanaged.passRetained(made)
        // Two first calls at once: the one that lost the exchange gives its own back.
        if !madeMeter.compareExchange(expected: nil, desired: retained, ordering: .acquiringAndReleasing).exchanged {
            retained.release()
        }
    }

    /// The loudness duck as the render side last rendered it; `nil` when none is set.
    var reading: LoudnessDuckReading? {
        guard onFlag.load(ordering: .relaxed) else { return nil }
        let main = Float(bitPattern: mainBits.load(ordering: .relaxed))
        let source = Float(bitPattern: sourceBits.load(ordering: .relaxed))
        return LoudnessDuckReading(
            depth: Float(bitPattern: depthBits.load(ordering: .relaxed)),
            mainLoudness: main.isFinite ? main : nil, sourceLoudness: source.isFinite ? source : nil)
    }

    // MARK: Render side

    /// Picks up what ``set(_:meterCount:frameRate:)`` published; `heard` is whether the duck is heard
    /// now (the voice-activity mix above 0), `rampFrames` the attack and release in frames.
    func pickUp(hasMeters: Bool, heard: Bool, attackFrames: Float, releaseFrames: Float) {
        meter = madeMeter.load(ordering: .acquiring)
        let packed = packedSlots.load()
        slots = (Self.unpack(packed.0), Self.unpack(packed.1), Self.unpack(packed.2), Self.unpack(packed.3))
        let wasActive = isActive
        isActive = hasMeters && (!slots.0.0.isNaN || !slots.1.0.isNaN || !slots.2.0.isNaN || !slots.3.0.isNaN)
        steps = windowSteps.load(ordering: .relaxed)
        shallowest = Float(bitPattern: shallowestBits.load(ordering: .relaxed))
        deepenPerFrame = Float(bitPattern: deepenBits.load(ordering: .relaxed))
        lightenPerFrame = Float(bitPattern: lightenBits.load(ordering: .relaxed))
        driftPerFrame = Float(bitPattern: driftBits.load(ordering: .relaxed))
        tolerance = Float(bitPattern: toleranceBits.load(ordering: .relaxed))
        volume = Float(bitPattern: volumeBits.load(ordering: .relaxed))
        if !heard { volumeNow = volume }
        volumeStep = abs(volume - volumeNow) / (volume < volumeNow ? attackFrames : releaseFrames)
        if !isActive, !heard {
            levelNow = 0
            levelAsked = 0
        }
        if isActive, !wasActive {
            starting = true
            windowFull = false
        }
        if isActive != wasActive { onFlag.store(isActive, ordering: .relaxed) }
    }

    /// Whether the follower shapes the stream in this chunk: set, or still moving back from a level.
    var isEngaged: Bool { isActive || levelNow != 0 || volumeNow != volume }

    /// Starts a chunk: the ceiling's factor at its start is where the last one ended.
    @inline(__always)
    func begin() {
        factorFrom = volumeNow * (levelNow == 0 ? 1 : linear(decibels: levelNow))
    }

    /// Measures `frames` of the stream's source (before its gain) and, for each 100 ms step completed,
    /// asks the level the followed meters' loudness calls for.
    func measure(
        _ input: UnsafePointer<Float>, frames: Int, channels: Int, meters: (UInt, UInt, UInt, UInt), heard: Bool,
        gain: Float
    ) {
        guard isActive, let meter else { return }
        meter._withUnsafeGuaranteedRef { meter in
            var done = 0
            while done < frames {
                done &+= meter.addUntilStep(input + done &* channels, frames: frames &- done)
                if meter.stepJustCompleted { ask(meter, meters: meters, heard: heard, gain: gain) }
            }
        }
    }

    /// A 100 ms step of the main's loudness is complete: the level each slot asks for, the deepest of
    /// them bounded, becomes the level asked.
    private func ask(_ meter: LoudnessMeter, meters: (UInt, UInt, UInt, UInt), heard: Bool, gain: Float) {
        // Over the steps measured so far, up to the window: the meter starts when the duck is set, and
        // the silence before it is not the movie's.
        let window = max(1, min(steps, meter.stepsMeasured))
        let source = Float(LoudnessMeter.loudness(meter.mean(ofLast: window)))
        // The last second well under the window: the movie stepped down rather than drifting, and the
        // level asked will rise for the rest of the window; the level follows it at the policy's rate.
        let recent = Float(LoudnessMeter.loudness(meter.mean(ofLast: min(window, Self.stepDetectionSteps))))
        if window > Self.stepDetectionSteps, source - recent > Self.stepDown { lighteningSteps = steps }
        // Over it: the movie stepped up, and the level asked deepens for the rest of the window.
        if window > Self.stepDetectionSteps, recent - source > Self.stepDown { deepeningSteps = steps }
        mainBits.store((source + decibels(gain)).bitPattern, ordering: .relaxed)
        guard source.isFinite else { return }
        let asks = (
            ask(slots.0, meters.0, source: source, heard: heard, held: &sourceHeld.0),
            ask(slots.1, meters.1, source: source, heard: heard, held: &sourceHeld.1),
            ask(slots.2, meters.2, source: source, heard: heard, held: &sourceHeld.2),
            ask(slots.3, meters.3, source: source, heard: heard, held: &sourceHeld.3)
        )
        let asked = min(min(asks.0.level, asks.1.level), min(asks.2.level, asks.3.level))
        let loudest = max(max(asks.0.source, asks.1.source), max(asks.2.source, asks.3.source))
        guard asked.isFinite else { return }
        levelAsked = asked
        // While the window fills (and at the first full one) the figure is still settling, not
        // drifting: the level follows it at the policy's rates.
        if meter.stepsMeasured <= steps { warming = true } else { windowFull = true }
        if lighteningSteps > 0 { lighteningSteps -= 1 }
        if deepeningSteps > 0 { deepeningSteps -= 1 }
        if starting {
            startStep = abs(asked - levelNow) / startFrames
            levelMoving = true
            starting = false
        }
        sourceBits.store(loudest.bitPattern, ordering: .relaxed)
    }

    /// What one slot asks: the bounded level (+∞: nothing) and the source's loudness it was set from
    /// (−∞: none), with the source's held loudness updated.
    @inline(__always)
    private func ask(_ slot: (Float, Float), _ meter: UInt, source: Float, heard: Bool, held: inout Float) -> (
        level: Float, source: Float
    ) {
        guard !slot.0.isNaN, meter != 0, let pointer = UnsafeRawPointer(bitPattern: meter) else {
            return (.infinity, -.infinity)
        }
        let (long, recent, blocks) = Unmanaged<ActivityMeter>.fromOpaque(pointer)._withUnsafeGuaranteedRef {
            ($0.speechLoudness, $0.recentSpeechLoudness, $0.speechBlocks)
        }
        // A first figure from single steps reads low (a held level would stay there): nothing is asked
        // on it.
        guard let long, blocks > 0 else { return (.infinity, -.infinity) }
        // The last 2 s of speech well under the last 10 s: a quieter speaker has the floor, and is
        // followed within a turn's first seconds rather than over 10 s of their speech. A louder one
        // is followed up at most sourceRelaxPerStep a step, as any louder figure is.
        let measured = recent.map { $0 < long - Self.quieterSpeaker ? $0 : long } ?? long
        held = heard && held.isFinite ? min(measured, held + Self.sourceRelaxPerStep) : measured
        return (max(slot.1, min(shallowest, held - slot.0 - source)), held)
    }

    /// Moves the level and the volume heard over `frames`: at once while the duck is not heard (no
    /// activity), else the level once it is more than the tolerance away, until it gets there: at
    /// ``driftRate`` while it is within the bands (``driftBand`` down, ``lighteningBand`` up), at the
    /// policy's rate once it was further, while the window fills and after the movie stepped down.
    /// Sets ``factorTo``; ``begin()`` set ``factorFrom``.
    @inline(__always)
    func move(frames: Int, heard: Bool, voiced: Bool) {
        let target = isActive ? levelAsked : 0
        if !heard, !isActive || !voiced {
            levelNow = target
            levelMoving = false
            levelCatchingUp = false
            startStep = 0
            volumeNow = volume
        } else {
            let distance = abs(target - levelNow)
            if distance > tolerance { levelMoving = true }
            // Deeper by more than the band: the voice is losing its margin, so the level catches up at
            // once. Lighter: only by more than the wider band, so a drifting movie's quieter half is
            // followed slowly and only a step of the movie brings it up at the policy's rate.
            if target < levelNow ? distance > Self.driftBand : distance > Self.lighteningBand {
                levelCatchingUp = true
                if target > levelNow { lighteningSteps = steps }
            }
            if !levelMoving, windowFull { warming = false }
            if levelMoving {
                let policyRate = target < levelNow ? deepenPerFrame : lightenPerFrame
                let fast =
                    levelCatchingUp || warming || (target > levelNow ? lighteningSteps > 0 : deepeningSteps > 0)
                let rate = startStep > 0 ? startStep : fast ? policyRate : min(driftPerFrame, policyRate)
                let step = Float(frames) * rate
                levelNow = target < levelNow ? max(target, levelNow - step) : min(target, levelNow + step)
                if levelNow == target {
                    levelMoving = false
                    levelCatchingUp = false
                    if windowFull { warming = false }
                    startStep = 0
                }
            }
            let step = Float(frames) * volumeStep
            volumeNow = volume < volumeNow ? max(volume, volumeNow - step) : min(volume, volumeNow + step)
        }
        factorTo = volumeNow * (levelNow == 0 ? 1 : linear(decibels: levelNow))
    }

    /// Publishes the depth heard at the end of a render call: `heard` over the stream's own `gain`.
    @inline(__always)
    func publish(heard: Float, gain: Float) {
        let depth = gain > 0 && heard < gain ? decibels(heard / gain) : 0
        depthBits.store(depth.bitPattern, ordering: .relaxed)
    }

    /// A slot as one atomic word: the margin's bits high (NaN: no slot), the deepest's low.
    private static func pack(_ slot: LoudnessSlot?) -> UInt64 {
        UInt64((slot?.margin ?? .nan).bitPattern) << 32 | UInt64((slot?.deepest ?? 0).bitPattern)
    }

    @inline(__always)
    private static func unpack(_ word: UInt64) -> (Float, Float) {
        (Float(bitPattern: UInt32(truncatingIfNeeded: word >> 32)), Float(bitPattern: UInt32(truncatingIfNeeded: word)))
    }
}
