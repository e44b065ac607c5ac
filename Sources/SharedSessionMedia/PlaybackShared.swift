import SharedSession
import Synchronization

/// Everything the control side, the decoder thread and the render side of one ``MediaFileSource``
/// exchange: the ring of decoded frames, the loop markers, and atomics. Nothing here locks.
///
/// Frames are counted by their ring index: the number of frames written to (or read from) the ring
/// before them since the source was made. Media time is counted in 48 kHz frames.
final class PlaybackShared: Sendable {
    /// Decoded frames, decoder thread to render side.
    let ring: AudioRingBuffer
    /// Where loops restart media time, decoder thread to render side.
    let markers = SegmentQueue()

    // Control side to the others.
    /// Whether the host wants sound (play) or not (pause).
    let playing: Atomic<Bool>
    /// Whether the end of the file goes on from the start.
    let looping = Atomic<Bool>(false)
    /// The number of seeks asked for; a new value is a new request.
    let seekRequest = Atomic<Int>(0)
    /// The media frame the latest request asked for.
    let seekTarget = Atomic<Int>(0)
    /// Tells the decoder thread to finish.
    let stop = Atomic<Bool>(false)
    /// Test hook: nanoseconds the decoder thread sleeps before each decoding step.
    let decodeDelayNanoseconds = Atomic<Int>(0)

    // Decoder thread to render side.
    /// The seek whose audio starts at ring index ``discardBefore``; frames before it are stale.
    let seekApplied = Atomic<Int>(0)
    let discardBefore = Atomic<Int>(0)
    /// The media frame the applied seek starts at.
    let appliedTarget = Atomic<Int>(0)
    /// Where the file ends, as an ``EndWord``: the ring index after its last frame (or unknown), for
    /// the seek the decoder had handled, and whether the render side has rendered that far. The
    /// render side claims the end (sets `heard`) with a compare-exchange, and the decoder takes an
    /// unheard end back the same way (looping switched on in time); the seek in the word keeps
    /// either side from acting on an end of a position the other has left.
    let endWord = Atomic<Int>(EndWord(seek: 0, index: nil).rawValue)

    // Decoder thread to control side.
    /// The latest seek (0: the initial fill) whose audio is buffered.
    let seekBuffered = Atomic<Int>(0)
    /// Whether the decoder has nothing more to write (end of file, looping off).
    let decoderFinished = Atomic<Bool>(false)

    // Render side to the others.
    /// The media frame after the last frame the render side delivered.
    let clockFrames = Atomic<Int>(0)
    /// The seek the render side has applied (its audio is what is heard).
    let renderSeek = Atomic<Int>(0)
    /// The ring index after the last frame the render side read or dropped.
    let renderConsumed = Atomic<Int>(0)
    let underrunFrames = Atomic<Int>(0)
    let underrunCount = Atomic<Int>(0)
    let loopsHeard = Atomic<Int>(0)
    let endsHeard = Atomic<Int>(0)

    /// Frames of the ring the decoder leaves free in steady playback, for a seek's first frames.
    let reserveFrames: Int
    /// The fill at which a playing source's decoder wakes to top the ring up: 5/8 of the ring, so it
    /// wakes after an eighth of the ring (85 ms of the default ring) has played, and a wake-up late by
    /// more than that still finds 5/8 of the ring (427 ms) to play from.
    let lowWatermark: Int

    init(capacity: Int, playing: Bool) throws(SessionError) {
        self.playing = Atomic(playing)
        ring = try AudioRingBuffer(minimumCapacity: capacity, channels: 2)
        reserveFrames = ring.capacity / 4
        lowWatermark = ring.capacity / 8 * 5
    }
}
