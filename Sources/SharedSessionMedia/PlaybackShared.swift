import SharedSession
import Synchronization

/// Everything the control side, the decoder thread and the render side of one ``MediaFileSource``
/// exchange: the ring of decoded frames, the segment markers, and atomics. Nothing here locks.
///
/// A seek is a serial, as in ffplay: the control side counts it up (``seekRequest``), the decoder
/// tags every segment it writes with the serial it has taken up (a ``SegmentQueue`` marker before
/// the segment's first frame), and the render side plays only the segments of the latest serial,
/// dropping older frames and markers by comparison. The end of the file is a marker too; the render
/// side says it has played an end by storing that serial in ``endHeard``. No value is shared by
/// compare-and-swap.
///
/// Frames are counted by their ring index: the number of frames written to (or read from) the ring
/// before them since the source was made. Media time is counted in 48 kHz frames.
final class PlaybackShared: Sendable {
    /// Decoded frames, decoder thread to render side.
    let ring: AudioRingBuffer
    /// Where seeks and loops start segments and where the file ends, decoder thread to render side.
    let markers = SegmentQueue()

    // Control side to the others.
    /// Whether the host wants sound (play) or not (pause).
    let playing: Atomic<Bool>
    /// Whether the end of the file goes on from the start.
    let looping = Atomic<Bool>(false)
    /// The number of seeks asked for: the latest seek's serial (0: the start).
    let seekRequest = Atomic<Int>(0)
    /// The media frame the latest request asked for.
    let seekTarget = Atomic<Int>(0)
    /// Tells the decoder thread to finish.
    let stop = Atomic<Bool>(false)
    /// Test hook: nanoseconds the decoder thread sleeps before each decoding step.
    let decodeDelayNanoseconds = Atomic<Int>(0)

    // Decoder thread to control side.
    /// The serial the decoder has taken up, and the ring index where its audio starts (frames before
    /// it are stale): what the readiness wait counts from.
    let decodedSerial = Atomic<Int>(0)
    let segmentStart = Atomic<Int>(0)
    /// The latest seek (0: the initial fill) whose audio is buffered.
    let seekBuffered = Atomic<Int>(0)
    /// Whether the decoder has nothing more to write (end of file, looping off).
    let decoderFinished = Atomic<Bool>(false)

    // Render side to the others.
    /// The media frame after the last frame the render side delivered.
    let clockFrames = Atomic<Int>(0)
    /// The seek the render side has applied (its audio is what is heard).
    let renderSeek = Atomic<Int>(0)
    /// The serial whose end the render side has played (an end marker, or a loop marker met with
    /// looping off); the decoder stops decoding that serial. -1: none.
    let endHeard = Atomic<Int>(-1)
    /// The ring index after the last frame the render side read or dropped.
    let renderConsumed = Atomic<Int>(0)
    /// The latest seek whose first frames the render side has played (0: the start).
    let startedSeek = Atomic<Int>(0)
    /// The latest seek whose first frames are in the heard timeline (0: the start).
    let timelineSeek = Atomic<Int>(0)
    /// Whether an engine has told the render side when its frames are heard.
    let timed = Atomic<Bool>(false)
    let underrunFrames = Atomic<Int>(0)
    let underrunCount = Atomic<Int>(0)
    let loopsHeard = Atomic<Int>(0)
    let endsHeard = Atomic<Int>(0)

    /// Frames of the ring the decoder leaves free in steady playback, for a seek's first frames. A
    /// seek's audio starts once this much of it is in the ring (or all there is): 171 ms of the
    /// default ring, two cycles at a quantum of 4096, which an engine may ask for in several render
    /// calls in a row, faster than the decoder writes its chunks.
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
