import SharedSession
import Synchronization

/// The render side of a ``MediaFileSource``: takes the decoder thread's frames from the ring in the
/// order its markers give (a seek's start, a loop, a gap, the end), fades them with a ``Declicker``
/// and notes in the ``HeardTimeline`` when each is heard; publishes what it played through the shared
/// atomics.
///
/// Used only by the render thread, one call at a time (as every engine guarantees for a source): its
/// state is plain `var`s. It never locks, allocates or makes a system call.
final class MediaRingReader {
    private let shared: PlaybackShared
    private var declicker = Declicker()
    private var heard: HeardTimelineWriter
    /// Where frames dropped before a seek's start are read into.
    private let scratch: UnsafeMutablePointer<Float>
    private static let scratchFrames = 1024

    /// Frames read from the ring so far (the markers' indexes count the same frames).
    private var consumed = 0
    /// The media frame of the next frame read.
    private var mediaPosition = 0
    /// The serial (seek) whose audio this side plays.
    private var serial = 0
    /// A newer serial was asked for and its start marker has not been found yet.
    private var seekPending = false
    /// This serial's end was played: nothing more until a seek.
    private var ended = false
    /// A seek was applied and its first frames are not in the ring yet: silence, not an underrun.
    private var awaitingSeekData = false
    private var started = false

    init(shared: PlaybackShared, timeline: HeardTimeline) {
        self.shared = shared
        heard = HeardTimelineWriter(timeline: timeline)
        scratch = .allocate(capacity: Self.scratchFrames * 2)
        scratch.initialize(repeating: 0, count: Self.scratchFrames * 2)
    }

    deinit {
        scratch.deallocate()
    }

    /// Writes up to `frames` frames, 48 kHz stereo interleaved, and returns the number written: see
    /// ``MediaFileSource/render(into:frames:heardAt:)``.
    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int, heardAt: MonotonicInstant?) -> Int {
        guard frames > 0 else { return 0 }
        let shared = self.shared
        if let heardAt {
            heard.callHeardAt = Int(heardAt.nanoseconds)
            if !shared.timed.load(ordering: .relaxed) { shared.timed.store(true, ordering: .releasing) }
        } else {
            heard.callHeardAt = -1
        }
        let playing = shared.playing.load(ordering: .acquiring)
        if !started {
            started = true
            declicker.start(audible: playing)
        }
        if !seekPending, shared.seekRequest.load(ordering: .acquiring) != serial {
            seekPending = true
            declicker.beginDiscontinuity()
        }
        var done = 0
        rendering: while done < frames {
            if seekPending { takeUpSeek() }
            let audible = playing && !seekPending
            if !audible, declicker.fadeGain == 0 {
                declicker.writeSilence(buffer + done &* 2, frames: frames &- done)
                done = frames
                break
            }
            if ended { break }
            // Frames in the ring, then the markers: a marker is published before the frame at its index.
            let available = shared.ring.availableToRead
            var limit = frames &- done
            while let marker = shared.markers.peek() {
                if marker.serial != serial {
                    // A newer seek's start: the decoder has moved on; stop here and take it up.
                    seekPending = true
                    declicker.beginDiscontinuity()
                    continue rendering
                }
                if marker.index > consumed {
                    limit = min(limit, marker.index &- consumed)
                    break
                }
                shared.markers.pop()
                if marker.kind == .discontinuity {
                    // A gap or a dropped frame in the file: the last sample decays, the audio fades in.
                    declicker.beginDiscontinuity()
                    continue
                }
                if marker.kind == .loop, shared.looping.load(ordering: .relaxed) {
                    mediaPosition = marker.mediaFrame
                    shared.loopsHeard.add(1, ordering: .relaxed)
                    continue
                }
                if marker.kind == .end, let next = shared.markers.peek(), next.serial == serial, next.kind == .loop,
                    next.index == marker.index
                {
                    // The decoder took the end back (looping was switched on in time): the loop follows.
                    continue
                }
                if marker.kind != .start {
                    // The end, or a loop point reached with looping switched off: playback ends here.
                    ended = true
                    // The count first: the releasing store publishes it with the end. The decoder reads
                    // `endHeard`, then `endsHeard`; seeing the end without its count, it would take the
                    // end as reported and sleep until a control call, and `endOfStream` would never come.
                    shared.endsHeard.add(1, ordering: .relaxed)
                    shared.endHeard.store(serial, ordering: .releasing)
                    declicker.beginDiscontinuity()
                    break rendering
                }
            }
            if !audible {
                limit = min(limit, declicker.framesToFadeOut)
            }
            if awaitingSeekData, audible, !seekAudioReady(available: available) {
                // A seek's audio starts with a reserve's worth in the ring: an engine may ask for a
                // whole quantum in several calls in a row, faster than the decoder writes its chunks.
                declicker.writeSilence(buffer + done &* 2, frames: frames &- done)
                done = frames
                break
            }
            let count = min(limit, available)
            if count > 0 {
                let output = buffer + done &* 2
                let got = shared.ring.read(into: output, frames: count)
                declicker.shape(output, frames: got, audible: audible)
                if heard.note(offset: done, media: mediaPosition, frames: got) {
                    shared.timelineSeek.store(serial, ordering: .releasing)
                }
                consumed &+= got
                mediaPosition &+= got
                done &+= got
                if awaitingSeekData {
                    awaitingSeekData = false
                    shared.startedSeek.store(serial, ordering: .releasing)
                }
                continue
            }
            // The ring is dry.
            if !audible {
                declicker.silenceFade()
                continue
            }
            if awaitingSeekData {
                // A seek's first frames are on their way: part of the seek, not an underrun.
                declicker.writeSilence(buffer + done &* 2, frames: frames &- done)
                done = frames
                break
            }
            if shared.seekRequest.load(ordering: .acquiring) != serial {
                seekPending = true
                declicker.beginDiscontinuity()
                continue
            }
            shared.underrunFrames.add(frames &- done, ordering: .relaxed)
            shared.underrunCount.add(1, ordering: .relaxed)
            declicker.beginDiscontinuity()
            break
        }
        if done < frames {
            // After an underrun or the end: the last sample's decay, counted as written.
            let decay = min(frames &- done, declicker.framesToDecay)
            declicker.writeSilence(buffer + done &* 2, frames: decay)
            done &+= decay
        }
        shared.clockFrames.store(mediaPosition, ordering: .relaxed)
        shared.renderConsumed.store(consumed, ordering: .releasing)
        shared.renderSeek.store(serial, ordering: .releasing)
        return done
    }

    /// Whether a seek's audio may start: a reserve's worth of it is in the ring (see
    /// ``PlaybackShared/reserveFrames``), or the decoder has reached the end at this serial.
    @inline(__always)
    private func seekAudioReady(available: Int) -> Bool {
        available >= shared.reserveFrames || shared.decoderFinished.load(ordering: .acquiring)
    }

    /// Looks for the start marker of the latest seek, dropping the markers of older serials on the
    /// way; when it is there, drops the stale frames before its index and starts the new position
    /// (fading in). Until then the seek stays pending and the source plays silence.
    @inline(__always)
    private func takeUpSeek() {
        let shared = self.shared
        while let marker = shared.markers.peek() {
            shared.markers.pop()
            guard marker.kind == .start, marker.serial == shared.seekRequest.load(ordering: .acquiring) else {
                continue
            }
            while consumed < marker.index {
                let dropped = shared.ring.read(into: scratch, frames: min(marker.index &- consumed, Self.scratchFrames))
                if dropped == 0 { break }
                consumed &+= dropped
            }
            mediaPosition = marker.mediaFrame
            serial = marker.serial
            seekPending = false
            awaitingSeekData = true
            ended = false
            declicker.silenceFade()
            heard.startSeek()
            return
        }
    }
}
