/// A look-ahead peak limiter for a downmix, so that a layout conversion never produces a sample
/// beyond full scale.
///
/// libswresample's standard matrix (what ffmpeg, mpv and browsers use by default) keeps the level a
/// listener knows — the front channels at their own level, centre and surrounds at −3 dB — so a
/// 5.1 or 7.1 programme sounds as loud as its stereo mix; but where several channels peak together
/// their sum goes past full scale (2.41 for 5.1, 3.12 for 7.1 in the worst case). Normalising the
/// matrix would make every downmix 7.7 dB (5.1) or 9.9 dB (7.1) quieter for the sake of a rare
/// peak; mpv's `audio-normalize-downmix` is off by default for that reason, and a browser clips at
/// its output. This limiter keeps the matrix's levels and, only around a peak, lowers the gain so
/// the peak lands at ``ceiling``.
///
/// The gain for a frame is the smallest gain any frame in the next ``lookahead`` frames needs,
/// averaged over the last ``lookahead`` frames: it slopes down over 5 ms before a peak and never
/// lets a frame past the ceiling; afterwards it recovers with a time constant of 100 ms. The
/// stereo frames are limited together (the same gain on both sides), so the image does not move.
///
/// It limits sample peaks, the values a sink receives; inter-sample (true) peaks are not estimated.
///
/// It works in place on the decoder's output: a frame is final once the ``lookahead`` frames after
/// it have been seen (or the file ended), and only final frames may be played.
struct DownmixLimiter {
    /// Frames of look-ahead: 5 ms at 48 kHz.
    static let lookahead = 240
    /// The largest sample value let through: −0.0087 dBFS.
    static let ceiling = 0.999
    /// The fraction of the way back to unity gain recovered per frame (a 100 ms time constant).
    static let release = 1.0 / 4800

    /// Frames with a peak over the ceiling, still inside some frame's look-ahead: their absolute
    /// index and the gain they need, the gains increasing from `oversHead` on (a sliding minimum).
    private var overs: [(index: Int, gain: Double)] = []
    private var oversHead = 0
    /// The last `lookahead` look-ahead minimums, and their sum.
    private var minimums = [Double](repeating: 1, count: DownmixLimiter.lookahead)
    private var sum = Double(DownmixLimiter.lookahead)
    private var gain = 1.0
    /// Frames seen, and frames made final, since the last reset (absolute indexes).
    private var received = 0
    private var finished = 0

    /// Gain reductions applied so far, as the lowest gain (for measurements and tests).
    private(set) var lowestGain = 1.0

    /// Forgets everything (after a seek: the frames that were in flight are gone).
    mutating func reset() {
        overs.removeAll(keepingCapacity: true)
        oversHead = 0
        for index in minimums.indices { minimums[index] = 1 }
        sum = Double(Self.lookahead)
        gain = 1
        received = 0
        finished = 0
    }

    /// Takes the interleaved stereo frames of `samples` from frame `newFrom` on as new, applies the
    /// gain to every frame that now has its look-ahead (all of them when `ending`: the file ended,
    /// nothing follows), and returns the frame index of `samples` up to which frames are final.
    /// Frames before `newFrom` that were not final yet must still be in `samples`, unchanged.
    mutating func process(_ samples: inout [Float], newFrom: Int, ending: Bool) -> Int {
        let offset = newFrom - received
        let count = samples.count / 2
        samples.withUnsafeMutableBufferPointer { buffer in
            for frame in newFrom..<count {
                let peak = max(abs(Double(buffer[frame * 2])), abs(Double(buffer[frame * 2 + 1])))
                take(peak > Self.ceiling ? Self.ceiling / peak : 1, buffer, offset: offset)
            }
            if ending {
                // Nothing follows the last frames: their look-ahead is unity gain.
                let real = received
                while finished < real { take(1, buffer, offset: offset) }
            }
        }
        if ending {
            // The virtual frames taken to finish are not in `samples`: start afresh after them.
            reset()
            return count
        }
        return finished + offset
    }

    /// One more frame needing `needed`; finishes the frame `lookahead − 1` before it.
    private mutating func take(_ needed: Double, _ samples: UnsafeMutableBufferPointer<Float>, offset: Int) {
        let index = received
        received += 1
        if needed < 1 {
            while overs.count > oversHead, overs[overs.count - 1].gain >= needed { overs.removeLast() }
            overs.append((index, needed))
        }
        let frame = index - (Self.lookahead - 1)
        guard frame >= finished, frame >= 0 else { return }
        while oversHead < overs.count, overs[oversHead].index < frame { oversHead += 1 }
        if oversHead == overs.count {
            overs.removeAll(keepingCapacity: true)
            oversHead = 0
        }
        let minimum = oversHead < overs.count ? overs[oversHead].gain : 1
        if frame == 0 {
            // The first frame has no frames before it to slope down over: the look-ahead minimums
            // before it (each over frames from 0 on, so no lower than the first frame's) start at its own.
            for index in minimums.indices { minimums[index] = minimum }
            sum = minimum * Double(Self.lookahead)
            gain = minimum
        }
        let slot = frame % Self.lookahead
        sum += minimum - minimums[slot]
        minimums[slot] = minimum
        let average = min(1, sum / Double(Self.lookahead))
        gain = min(average, gain + (1 - gain) * Self.release)
        finished = frame + 1
        guard gain < 1 else { return }
        lowestGain = min(lowestGain, gain)
        let position = (frame + offset) * 2
        guard position >= 0, position + 1 < samples.count else { return }
        samples[position] = Float(Double(samples[position]) * gain)
        samples[position + 1] = Float(Double(samples[position + 1]) * gain)
    }
}
