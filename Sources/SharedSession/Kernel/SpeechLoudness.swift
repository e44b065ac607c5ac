import Synchronization

/// The loudness of a signal while it speaks, the part of an ``ActivityMeter`` that a loudness duck
/// reads: a BS.1770 meter of the signal, and the energies of its last speech blocks.
///
/// An activity meter makes it on its first ``ActivityMeter/measureLoudness()`` call, not with the
/// meter: every stream has an activity meter, and only the few followed by a loudness duck measure
/// their loudness (the meter and the ring are about 1.5 KB). Only the meter's writer touches it,
/// inside ``ActivityMeter/measure(_:frames:channels:)``, which never allocates or locks.
final class SpeechLoudness {
    /// The 100 ms steps of speech the loudness is taken over: 10 s of speech.
    static let speechSteps = 100
    /// The 100 ms steps of speech the recent loudness is taken over: 2 s of speech.
    static let recentSpeechSteps = 20

    private let meter: LoudnessMeter
    /// The energies of the last speech blocks, a ring of up to ``speechSteps``.
    private let speech: UnsafeMutablePointer<Double>
    private var speechCount = 0
    private var speechIndex = 0
    /// Whether a frame of the step in progress reached the threshold, in blocks measured before.
    private var voicedInStep = false
    /// Voiced steps in a row, and whether the ring holds blocks (after the first block voiced
    /// throughout) rather than steps.
    private var voicedStreak = 0
    private var ringIsWhole = false

    /// The speech loudness of audio in `format`; `nil` for a format the loudness meter refuses.
    init?(format: AudioFormat) {
        guard
            let meter = try? LoudnessMeter(
                channelWeights: [Double](repeating: 1, count: max(1, min(16, format.channels))),
                sampleRate: format.sampleRate, integrates: false)
        else { return nil }
        self.meter = meter
        speech = .allocate(capacity: Self.speechSteps)
        speech.initialize(repeating: 0, count: Self.speechSteps)
    }

    deinit { speech.deallocate() }

    /// Interleaved channels the meter measures.
    var channels: Int { meter.channels }

    /// Feeds the loudness meter; each 100 ms step with a frame at the threshold (`start..<end` of
    /// this block) adds the 400 ms block it ends to the speech ring, and the gated loudness of the
    /// ring is published to `loudnessBits` (LUFS as Float bits), that of its last
    /// ``recentSpeechSteps`` to `recentBits`, the blocks it is taken over to `blocks` once the ring
    /// holds whole blocks. Writer only; never allocates or locks.
    @inline(__always)
    func measure(
        _ samples: UnsafePointer<Float>, frames: Int, voicedFrom start: Int, to end: Int,
        loudnessBits: borrowing Atomic<UInt32>, recentBits: borrowing Atomic<UInt32>, blocks: borrowing Atomic<Int>
    ) {
        let channels = meter.channels
        var stepStart = 0
        var done = 0
        while done < frames {
            done &+= meter.addUntilStep(samples + done &* channels, frames: frames &- done)
            guard meter.stepJustCompleted else { break }
            let voiced = voicedInStep || (start < done && end > stepStart)
            voicedInStep = false
            stepStart = done
            voicedStreak = voiced ? voicedStreak &+ 1 : 0
            // Until the first block voiced throughout (its 4 steps), the voiced steps themselves give a
            // first figure, each but the first of a run (the step the voice starts in is partly silence
            // and reads low): the blocks before it start in the silence before the first word and read
            // low too. From it on, every block that ends in a voiced step counts, as BS.1770 counts them.
            guard voiced, ringIsWhole || voicedStreak >= 2 else { continue }
            if voicedStreak >= LoudnessMeter.momentarySteps, !ringIsWhole {
                ringIsWhole = true
                speechCount = 0
            }
            speech[speechIndex] = meter.mean(ofLast: ringIsWhole ? LoudnessMeter.momentarySteps : 1)
            speechIndex = (speechIndex &+ 1) % Self.speechSteps
            speechCount = min(speechCount &+ 1, Self.speechSteps)
            if let loudness = gatedLoudness(ofLast: speechCount) {
                loudnessBits.store(loudness.bitPattern, ordering: .relaxed)
            }
            if let loudness = gatedLoudness(ofLast: min(speechCount, Self.recentSpeechSteps)) {
                recentBits.store(loudness.bitPattern, ordering: .relaxed)
            }
            if ringIsWhole { blocks.store(speechCount, ordering: .relaxed) }
        }
        if start < frames, end > stepStart { voicedInStep = true }
    }

    /// BS.1770's gating over the last `count` speech blocks: the absolute gate (−70 LUFS), then the
    /// relative one (10 LU under the loudness of the blocks left); `nil` when no block passes.
    private func gatedLoudness(ofLast count: Int) -> Float? {
        let ring = Self.speechSteps
        var sum = 0.0
        var kept = 0
        for back in 1...max(1, count) where count > 0 {
            let energy = speech[(speechIndex &- back &+ ring) % ring]
            if LoudnessMeter.loudness(energy) > LoudnessMeter.absoluteGate {
                sum += energy
                kept &+= 1
            }
        }
        guard kept > 0 else { return nil }
        let threshold = LoudnessMeter.loudness(sum / Double(kept)) + LoudnessMeter.relativeGate
        sum = 0
        kept = 0
        for back in 1...count {
            let energy = speech[(speechIndex &- back &+ ring) % ring]
            if LoudnessMeter.loudness(energy) > max(threshold, LoudnessMeter.absoluteGate) {
                sum += energy
                kept &+= 1
            }
        }
        guard kept > 0 else { return nil }
        return Float(LoudnessMeter.loudness(sum / Double(kept)))
    }
}
