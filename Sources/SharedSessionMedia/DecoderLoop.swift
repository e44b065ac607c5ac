import SharedSession
import Synchronization

/// The decoder side of a ``MediaFileSource``: decodes ahead into the ring, carries out seeks and
/// loops, and turns what the render side counted into events.
///
/// Between rounds of work it sleeps in ``DecoderWakeup``: until a control call wakes it, or, while
/// the source plays, for the time the render side takes to drain the ring from its fill to
/// ``PlaybackShared/lowWatermark`` at the stream's rate (to the end, once the file is all in the
/// ring). A paused source with a full ring sleeps until a control call.
///
/// It runs on the thread that makes the source until the first fill is done (so a file that does
/// not decode fails there, with an error), then on the source's decoder thread until the source goes.
final class DecoderLoop: @unchecked Sendable {
    // @unchecked: every `var` below is touched by one thread at a time: the thread making the source
    // until it starts the decoder thread (pthread_create orders the two), then only the decoder
    // thread. The render side and the control side reach it only through `shared`'s atomics.

    private enum Phase {
        /// Reading and decoding the file.
        case decoding
        /// The file's frames are all decoded (some may wait in `pending`).
        case endOfData
        /// Every frame is in the ring, followed by an end marker (or the render side ended playback
        /// at a loop point).
        case ended
    }

    let shared: PlaybackShared
    let hub: EventHub
    let decoder: MediaDecoder
    let wakeup: DecoderWakeup

    /// Decoded frames not yet in the ring (interleaved stereo), from `pendingOffset` samples on.
    private var pending: [Float] = []
    private var pendingOffset = 0
    /// A file with more than two channels is downmixed: its peaks are limited to full scale.
    private var limiter: DownmixLimiter?
    /// The frame index of `pending` up to which the limiter has made frames final (all of them
    /// without a limiter); only those are written to the ring.
    private var limitedFrames = 0
    /// Markers to publish before the next frame is written (the queue was full).
    private var pendingMarkers: [SegmentQueue.Marker] = []
    /// Frames written to the ring so far (the next frame's ring index).
    private var produced = 0
    /// The media frame after the last decoded frame.
    private var decodedMediaFrame = 0
    private var phase = Phase.decoding
    private var handledSeek = 0
    /// A seek whose `seeked` event waits for its audio to be buffered.
    private var unannouncedSeek: (serial: Int, target: Int)?
    private var inErrorBurst = false
    private var consecutiveFailures = 0
    private var truncationReported = false

    private var reportedUnderrunFrames = 0
    private var reportedLoops = 0
    private var reportedEnds = 0

    /// Frames decoded ahead of the ring in one go.
    private static let chunkFrames = 2048
    /// Consecutive failed steps after which the file is given up on.
    private static let failureLimit = 1000
    /// The shortest sleep while playing: a render side that has not drained anything yet is not
    /// looked at more often than this.
    static let minimumSleepNanoseconds = 20_000_000
    /// The sleep while playing once the render side has every frame up to the end but has not
    /// rendered the end yet (a stream the session paused at the end): how late `endOfStream` may come.
    static let endSleepNanoseconds = 250_000_000

    init(shared: PlaybackShared, hub: EventHub, decoder: MediaDecoder, wakeup: DecoderWakeup) {
        self.shared = shared
        self.hub = hub
        self.decoder = decoder
        self.wakeup = wakeup
        if decoder.info.channels > 2 { limiter = DownmixLimiter() }
    }

    /// Fills the ring on the calling thread. Throws when the file yields no audio at all.
    func prefill() throws(SessionError) {
        var firstError: SessionError?
        while phase != .ended {
            if pendingFrames > 0, room == 0 { break }
            if phase == .endOfData, produced == 0, pendingFrames == 0 { break }
            guard pump(firstError: &firstError) else { break }
        }
        // A file shorter than the ring ends during the fill: its end marker goes out now, before
        // any render call can look for it.
        if flushMarkers(), phase == .ended { shared.decoderFinished.store(true, ordering: .releasing) }
        if produced == 0, pendingFrames == 0 {
            if let firstError {
                throw firstError
            }
            throw SessionError.mediaUnreadable(
                decoder.path, "has an audio track (\(decoder.info)) with no audio in it",
                fix: "check the file; a track of zero length cannot be played")
        }
        shared.seekBuffered.store(0, ordering: .releasing)
    }

    /// The decoder thread's body.
    func run() {
        while !shared.stop.load(ordering: .acquiring) {
            var firstError: SessionError?
            var worked = handleSeek()
            worked = pump(firstError: &firstError) || worked
            announceSeek()
            reportRenderEvents()
            wakeup.announceProgress()
            if !worked {
                wakeup.sleep(nanoseconds: idleSleep())
            }
        }
    }

    /// How long to sleep when there is nothing to do, in nanoseconds; nil until a control call.
    ///
    /// Nothing to do means the ring is full (up to its reserve), the marker queue is full, or the file
    /// is all in the ring. Paused, nothing drains it: only a control call (play, seek, looping, a
    /// host waiting for audio, close) changes that. Playing, the render side drains it at the
    /// stream's rate: the decoder wakes when the fill has come down to the low watermark, early
    /// enough that a late wake-up still finds most of the ring to play from.
    private func idleSleep() -> Int? {
        Self.idleSleep(
            playing: shared.playing.load(ordering: .acquiring),
            renderTookLatestSeek: shared.renderSeek.load(ordering: .acquiring) == handledSeek,
            ended: phase == .ended, endRendered: shared.endHeard.load(ordering: .acquiring) == handledSeek,
            endReported: shared.endsHeard.load(ordering: .relaxed) == reportedEnds,
            fill: shared.ring.availableToRead, lowWatermark: shared.lowWatermark)
    }

    /// The sleep of ``idleSleep()``, from what it reads: `fill` frames in the ring, of which the
    /// render side plays down to `lowWatermark` before the decoder must be back.
    static func idleSleep(
        playing: Bool, renderTookLatestSeek: Bool, ended: Bool, endRendered: Bool, endReported: Bool = true,
        fill: Int, lowWatermark: Int
    ) -> Int? {
        guard playing else { return nil }
        // Until the render side takes up the latest seek, the ring still holds the old position's
        // frames, which it will drop: only the reserve's worth of the new position is there to play,
        // so the fill says nothing about how long it lasts. Look again soon (a render cycle or so).
        guard renderTookLatestSeek else { return minimumSleepNanoseconds }
        let frames: Int
        if ended {
            // The end was rendered: nothing more happens until a seek, once its event is out. The render
            // side may have rendered it after this round's report: go round once more to report it.
            if endRendered { return endReported ? nil : 0 }
            // Wake when the render side should have played up to the end, to report it.
            guard fill > 0 else { return endSleepNanoseconds }
            frames = fill
        } else {
            frames = fill - lowWatermark
        }
        let nanoseconds = frames * 1_000_000_000 / AudioFormat.standard.sampleRate
        return max(minimumSleepNanoseconds, nanoseconds)
    }

    private var pendingFrames: Int { (pending.count - pendingOffset) / 2 }

    /// Frames the decoder may write now. It keeps ``PlaybackShared/reserveFrames`` of the ring free
    /// while the render side plays the current position, so that after a seek the new position's
    /// first frames fit behind the stale ones at once (only the render side can drop those); until
    /// the render side has taken up the latest seek, the reserve may be filled.
    private var room: Int {
        let free = shared.ring.availableToWrite
        guard shared.renderSeek.load(ordering: .acquiring) == handledSeek else { return free }
        return max(0, free - shared.reserveFrames)
    }

    // MARK: Decoding and writing

    /// Does one round of work; false when there was none (ring full, or the file ended).
    private func pump(firstError: inout SessionError?) -> Bool {
        var worked = false
        if phase != .ended, shared.endHeard.load(ordering: .acquiring) == handledSeek {
            // The render side ended playback at a loop point (looping was switched off after the
            // decoder had passed it), or at an end this thread took back too late: nothing more to
            // decode until a seek.
            pending.removeAll(keepingCapacity: true)
            pendingOffset = 0
            resetLimiter()
            pendingMarkers.removeAll()
            phase = .ended
            shared.decoderFinished.store(true, ordering: .releasing)
            return true
        }
        if !pendingMarkers.isEmpty {
            let waiting = pendingMarkers.count
            _ = flushMarkers()
            worked = pendingMarkers.count < waiting
        }
        if pendingFrames > 0 {
            // Frames up to the first marker that did not fit in the queue may go (a marker goes out
            // before the frame at its index), so the render side can play on to the markers queued.
            var count = min(pendingFrames, room)
            if let blocked = pendingMarkers.first { count = min(count, max(0, blocked.index - produced)) }
            if limiter != nil { count = min(count, max(0, limitedFrames - pendingOffset / 2)) }
            let written = pending.withUnsafeBufferPointer { buffer in
                shared.ring.write(UnsafeBufferPointer(rebasing: buffer[pendingOffset..<(pendingOffset + count * 2)]))
            }
            produced += written
            pendingOffset += written * 2
            if pendingOffset == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingOffset = 0
                limitedFrames = 0
            }
            if written > 0 { worked = true }
            // Frames the limiter holds back for their look-ahead wait for more decoding; others for room.
            let held = limiter == nil ? 0 : max(0, pendingFrames - max(0, limitedFrames - pendingOffset / 2))
            if pendingFrames > held { return worked }
        }
        switch phase {
        case .decoding:
            decodeChunk(firstError: &firstError)
            return true
        case .endOfData:
            reportTruncation()
            if shared.looping.load(ordering: .relaxed) {
                restartForLoop()
            } else {
                publishEnd()
            }
            return true
        case .ended:
            // Looping switched on before the render side played the end: take the end back with a
            // loop marker at the end's index, which the render side finds right behind the end marker.
            // If it plays the end first after all, it says so in endHeard and the check above stops
            // this serial again.
            guard shared.looping.load(ordering: .acquiring), shared.endHeard.load(ordering: .acquiring) != handledSeek
            else {
                // (The isLooping setter clears decoderFinished so that waiting hosts wait for this.)
                if !shared.decoderFinished.load(ordering: .acquiring) {
                    shared.decoderFinished.store(true, ordering: .releasing)
                }
                return worked
            }
            shared.decoderFinished.store(false, ordering: .releasing)
            restartForLoop()
            return true
        }
    }

    /// The testing delay before a step, slept in slices of at most 5 ms: a test that clears it
    /// (`setDecodeDelayForTesting(.zero)`) gets the decoder back at once, not after the rest of a
    /// 30 s sleep (which made the underrun test wait out its 5 s and fail now and then).
    private func sleepWhileDelayed(_ nanoseconds: Int) {
        var slept = 0
        while slept < nanoseconds, shared.decodeDelayNanoseconds.load(ordering: .relaxed) > 0 {
            let slice = min(nanoseconds - slept, 5_000_000)
            sleepNanoseconds(slice)
            slept += slice
        }
    }

    private func decodeChunk(firstError: inout SessionError?) {
        let newFrom = pending.count / 2
        defer {
            if limiter != nil {
                limitedFrames = limiter!.process(&pending, newFrom: newFrom, ending: phase != .decoding)
            }
        }
        let delay = shared.decodeDelayNanoseconds.load(ordering: .relaxed)
        while pendingFrames < Self.chunkFrames, phase == .decoding {
            if delay > 0 { sleepWhileDelayed(delay) }
            let step = decoder.step(into: &pending)
            for frame in decoder.takeDiscontinuities() {
                pendingMarkers.append(
                    SegmentQueue.Marker(
                        kind: .discontinuity, index: produced + frame - pendingOffset / 2, mediaFrame: 0,
                        serial: handledSeek))
            }
            switch step {
            case .produced(let frames):
                decodedMediaFrame += frames
                if let gap = decoder.takeGap(), !inErrorBurst {
                    hub.emit(
                        .decodeError(
                            SessionError.mediaUnreadable(
                                decoder.path,
                                "is damaged: \(Self.seconds(gap.seconds)) of audio at \(Self.seconds(gap.at)) "
                                    + "could not be read and plays as silence, so the clock stays in step",
                                fix: "re-encode or download the file again")))
                }
                if frames > 0 {
                    inErrorBurst = false
                    consecutiveFailures = 0
                }
            case .endOfFile:
                phase = .endOfData
            case .failed(let error, let fatal):
                consecutiveFailures += 1
                if firstError == nil { firstError = error }
                // One event per damaged stretch, not one per packet.
                if !inErrorBurst {
                    inErrorBurst = true
                    hub.emit(.decodeError(error))
                }
                if fatal || consecutiveFailures >= Self.failureLimit {
                    if !fatal {
                        hub.emit(
                            .decodeError(
                                SessionError.mediaUnreadable(
                                    decoder.path,
                                    "is damaged beyond \(Self.failureLimit) packets in a row; playback ends there",
                                    fix: "re-encode or download the file again")))
                    }
                    phase = .endOfData
                }
            }
        }
    }

    /// Every frame is written: marks where the file ends, for the seek handled. (The host learns it
    /// once the marker is out: the `.ended` round after it says `decoderFinished`.)
    private func publishEnd() {
        pendingMarkers.append(SegmentQueue.Marker(kind: .end, index: produced, mediaFrame: 0, serial: handledSeek))
        _ = flushMarkers()
        phase = .ended
    }

    /// Pushes the pending markers, in order; false while the queue is full.
    private func flushMarkers() -> Bool {
        while let marker = pendingMarkers.first {
            guard shared.markers.push(marker) else { return false }
            pendingMarkers.removeFirst()
        }
        return true
    }

    private func restartForLoop() {
        if let error = decoder.seek(toFrame: 0) {
            hub.emit(.decodeError(error))
            publishEnd()
            return
        }
        pendingMarkers.append(SegmentQueue.Marker(kind: .loop, index: produced, mediaFrame: 0, serial: handledSeek))
        decodedMediaFrame = 0
        truncationReported = false
        phase = .decoding
    }

    /// A file whose audio stops well before the length its header gives was cut short or damaged
    /// beyond where the demuxer can resynchronise: say so once.
    private func reportTruncation() {
        guard !truncationReported, let duration = decoder.duration else { return }
        truncationReported = true
        let expected = AudioFormat.standard.frames(in: duration)
        let tolerance = max(AudioFormat.standard.sampleRate / 4, expected / 50)
        guard decodedMediaFrame < expected - tolerance else { return }
        let format = AudioFormat.standard
        let heard = Double(decodedMediaFrame) / Double(format.sampleRate)
        let said = Double(expected) / Double(format.sampleRate)
        hub.emit(
            .decodeError(
                SessionError.mediaUnreadable(
                    decoder.path,
                    "is truncated or damaged: its audio stops at \(Self.seconds(heard)) but the file says "
                        + "\(Self.seconds(said))",
                    fix: "download or copy the file again; playback ends where the file can no longer be read")))
    }

    // MARK: Seeking

    /// Takes up the latest seek: a new serial, whose segment starts at the next frame written. The
    /// start marker goes out first; frames before its index are stale, and the render side drops them
    /// (with the older serials' markers) when it finds the marker.
    private func handleSeek() -> Bool {
        let serial = shared.seekRequest.load(ordering: .acquiring)
        guard serial != handledSeek else { return false }
        let target = shared.seekTarget.load(ordering: .acquiring)
        handledSeek = serial
        pending.removeAll(keepingCapacity: true)
        pendingOffset = 0
        resetLimiter()
        pendingMarkers.removeAll()
        pendingMarkers.append(SegmentQueue.Marker(kind: .start, index: produced, mediaFrame: target, serial: serial))
        inErrorBurst = false
        consecutiveFailures = 0
        truncationReported = false
        decodedMediaFrame = target
        shared.decoderFinished.store(false, ordering: .releasing)
        shared.segmentStart.store(produced, ordering: .relaxed)
        shared.decodedSerial.store(serial, ordering: .releasing)
        if let error = decoder.seek(toFrame: target) {
            hub.emit(.decodeError(error))
            publishEnd()
        } else {
            phase = .decoding
        }
        unannouncedSeek = (serial, target)
        return true
    }

    /// After `pending` was emptied: what the limiter held is gone.
    private func resetLimiter() {
        limiter?.reset()
        limitedFrames = 0
    }

    /// Sends `seeked` once the new position's audio fills the ring (or the file ended).
    private func announceSeek() {
        guard let seek = unannouncedSeek else { return }
        let full = pendingFrames > 0 && room == 0
        guard full || phase == .ended else { return }
        unannouncedSeek = nil
        guard seek.serial == shared.seekRequest.load(ordering: .acquiring) else { return }
        // The event first: a host that waited for the seek's audio (`waitUntilBuffered`) has it by then.
        hub.emit(.seeked(to: AudioFormat.standard.duration(ofFrames: seek.target)))
        shared.seekBuffered.store(seek.serial, ordering: .releasing)
        wakeup.announceProgress()
    }

    // MARK: Events from the render side

    private func reportRenderEvents() {
        let underrun = shared.underrunFrames.load(ordering: .relaxed)
        if underrun > reportedUnderrunFrames {
            hub.emit(.underrun(frames: underrun - reportedUnderrunFrames))
            reportedUnderrunFrames = underrun
        }
        let loops = shared.loopsHeard.load(ordering: .relaxed)
        while reportedLoops < loops {
            reportedLoops += 1
            hub.emit(.looped)
        }
        let ends = shared.endsHeard.load(ordering: .relaxed)
        while reportedEnds < ends {
            reportedEnds += 1
            hub.emit(.endOfStream)
        }
    }

    /// A time in seconds to the millisecond, for messages. A damaged file's timestamps can say anything:
    /// negative times keep their sign, and a time no Int can count in milliseconds (or not a number)
    /// is written as it is.
    static func seconds(_ value: Double) -> String {
        guard value.isFinite, value.magnitude < 1e15 else { return "\(value) s" }
        let milliseconds = Int((value.magnitude * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        let sign = value < 0 && milliseconds > 0 ? "-" : ""
        return "\(sign)\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
    }
}
