import SharedSession

/// Finds stretches of media time a file skipped (a damaged Ogg page the demuxer dropped) from the
/// timestamps of the decoded frames, so the decoder can fill them with silence and the clock stays on
/// media time. Used by ``MediaDecoder`` on its thread.
struct MediaGapFinder {
    /// Gaps shorter than this, in seconds, are timestamp jitter, not missing audio (Ogg interpolates the
    /// timestamps of Vorbis packets between pages, off by some milliseconds where block sizes change).
    static let threshold = 0.02
    /// The longest gap filled, in seconds: a timestamp further off is a damaged one, not missing audio.
    private static let longest = 10.0

    /// Where (in seconds of media time) the next decoded frame should start, from the last one.
    var expectedStart: Double?
    /// The last gap found, until ``take()``.
    private var gap: (at: Double, seconds: Double)?

    /// Follows a frame of `length` samples at `rate` that starts at sample `stated` of media time (nil:
    /// it has no timestamp, so it follows the one before). Returns the 48 kHz frames of silence that
    /// stand in for media skipped before it (0 when none).
    mutating func follow(stated: Double?, length: Int32, rate: Int32) -> Int {
        let seconds = Double(length) / Double(max(1, rate))
        guard let stated else {
            if let expected = expectedStart { expectedStart = expected + seconds }
            return 0
        }
        var silenceFrames = 0
        let start = stated / Double(rate)
        if let expected = expectedStart, start - expected > Self.threshold {
            let missing = min(start - expected, Self.longest)
            silenceFrames = Int((missing * Double(AudioFormat.standard.sampleRate)).rounded())
            gap = (expected, missing)
        }
        expectedStart = start + seconds
        return silenceFrames
    }

    /// Forgets where the audio was: after a seek nothing is expected.
    mutating func reset() {
        expectedStart = nil
        gap = nil
    }

    /// The last gap that was played as silence, if any since the last call.
    mutating func take() -> (at: Double, seconds: Double)? {
        defer { gap = nil }
        return gap
    }
}
