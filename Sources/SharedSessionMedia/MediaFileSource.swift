public import SharedSession
import Synchronization

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// An `AudioSource` that plays the audio track of a media file: an audio file (WAV,
/// FLAC, Ogg Vorbis, Opus, MP3) or the soundtrack of a video (MP4/AAC, MKV, WebM/Opus), decoded by
/// FFmpeg and converted to `AudioFormat.standard` (48 kHz stereo float) whatever the
/// file's rate and channel layout. A file of more than two channels is downmixed with
/// libswresample's standard matrix, its peaks held under full scale by a look-ahead limiter.
///
/// ```swift
/// let movie = try MediaFileSource(path: "movie.mp4")      // paused at 0: nothing is consumed yet
/// let main = try session.openMainStream(source: movie)
/// movie.play()
/// // each display refresh: show the frame whose timestamp matches what is heard when it is shown
/// let time = movie.clock(at: nextVsync)
/// ```
///
/// ## The start state
/// A source starts paused at the file's start, as AVPlayer, ExoPlayer and GStreamer's players do:
/// its ring is filled, but the render side plays silence, consumes nothing and keeps ``clock`` at
/// zero until ``play()``. Pass `startsPlaying: true` to start playing as soon as a stream renders it.
///
/// ## Threads
/// - A decoder thread of the source's own decodes ahead into an `AudioRingBuffer`
///   of ``bufferFrames`` frames. The render side (``render(into:frames:)``, called by the engine on
///   its real-time thread) only reads the ring and atomics: it never locks, allocates or makes a
///   system call, so it cannot wake the decoder either.
/// - The decoder thread is woken, it does not poll. Between rounds of decoding it sleeps on a
///   condition variable: while the source plays, for the time the render side takes to drain the
///   ring from its fill down to a low watermark (5/8 of the ring) at 48 kHz, so it tops the ring up
///   about every 85 ms with the default ring; while paused with a full ring, until a control call.
///   Every control call (``play()``, ``pause()``, ``seek(to:)``, ``isLooping``, a wait for audio,
///   releasing the source) wakes it at once.
/// - The control methods may be called from any thread; they publish through atomics, wake the
///   decoder, and take effect at the next render call.
/// - Events (``events``, ``eventHandler``) come from the decoder thread, when it next wakes.
///
/// ## The audio clock
/// ``clock(at:)`` is the media time the listener hears at a given instant on the monotonic clock:
/// what a video follows, called from the display loop with the instant the next picture is shown.
/// The engine tells the source when each frame it renders is heard (the route's latency as the sound
/// server reports it: a quantum or two on a plain sink, 150 to 250 ms on Bluetooth headphones), and
/// the clock runs smoothly between render calls. ``clock`` is the media time of the audio delivered
/// to the engine, ahead of what is heard by the route's latency. Both count the frames the render
/// side actually rendered, not what was decoded: they stop while the source is paused, while the
/// session pauses or suspends the stream, and during an underrun, and jump with a seek or a loop;
/// ``clock(at:)`` does each when it is heard.
///
/// ## FFmpeg's log
/// The first source made sets FFmpeg's process-wide log level to quiet if it is still FFmpeg's
/// default, since every problem reaches the host as a `SessionError` or a ``MediaEvent``; a host that
/// set a level of its own (`av_log_set_level`) keeps it.
///
/// ## Discontinuities
/// Pausing and resuming fade over 5 ms. A seek, an underrun, the end of the file or a gap in the
/// decoded audio (a damaged frame dropped, media the demuxer skipped and silence stands in for, a
/// decoder reset) never plays a step: the last sample heard decays to zero over 5 ms while the new
/// audio fades in, so no stale audio from before the seek point is played and nothing clicks.
public final class MediaFileSource: AudioSource, @unchecked Sendable {
    // @unchecked: the `var`s below the "Render side" mark are read and written only by the render
    // thread (one at a time, as every engine guarantees for a source). Everything else is `let`:
    // `shared` holds only atomics and the SPSC ring and marker queue, whose producer is the decoder
    // thread and whose consumer is the render side; `loop` is touched by its own thread only.

    /// The file being played.
    public let path: String
    /// What the file's audio track is.
    public let info: MediaInfo
    /// The audio track's length, when the file says (nil for a stream that does not).
    public let duration: Duration?
    /// Frames the ring between the decoder thread and the render side holds (a power of two).
    public let bufferFrames: Int

    /// The ring size used unless another is asked for: 32768 frames, 683 ms at 48 kHz — four times
    /// the largest quantum an engine asks for. A playing source's decoder tops it up when it has
    /// drained to 5/8 (20480 frames, 427 ms), so a decoder woken late still stays well ahead.
    public static let defaultBufferFrames = 32_768

    private let shared: PlaybackShared
    private let timeline = HeardTimeline(sampleRate: AudioFormat.standard.sampleRate)
    private let hub: EventHub
    private let loop: DecoderLoop
    private let wakeup: DecoderWakeup
    private let thread = DecoderThread()
    private let control = Locked(())
    private let scratch: UnsafeMutablePointer<Float>
    private static let scratchFrames = 1024
    private static let declickFrames = AudioFormat.standard.sampleRate / 200

    // MARK: Render side
    private var consumed = 0
    private var mediaPosition = 0
    private var runGain: Float = 1
    private var tailLeft: Float = 0
    private var tailRight: Float = 0
    private var tailGain: Float = 0
    private var lastLeft: Float = 0
    private var lastRight: Float = 0
    /// The serial (seek) whose audio this side plays.
    private var serial = 0
    /// A newer serial was asked for and its start marker has not been found yet.
    private var seekPending = false
    /// This serial's end was played: nothing more until a seek.
    private var ended = false
    /// A seek was applied and its first frames are not in the ring yet: silence, not an underrun.
    private var awaitingSeekData = false
    private var started = false
    /// When the listener hears the first frame of this render call, in monotonic nanoseconds; -1:
    /// the engine did not say.
    private var callHeardAt = -1
    /// The newest run of the heard timeline: when its first frame is heard, its first media frame
    /// and its length; `runOpen` once there is one.
    private var runStart = 0
    private var runMedia = 0
    private var runFrames = 0
    private var runOpen = false
    /// A seek was taken up: the next frames start a run that instants before it read as the seek's.
    private var seekRunPending = false

    /// How far the instant a render call's frames are heard may drift from where the run before them
    /// ends before they start a new run: jitter in the sound server's timestamps below it is smoothed
    /// over, a real change (a route's latency, a quantum change, a clock drifting) above it is
    /// followed. A quarter of a millisecond: a quarter of the accuracy promised at the ear.
    static let resyncThreshold = 250_000

    /// Opens the media file at `path`, checks that its audio track decodes, fills the ring and starts
    /// the decoder thread. The source starts at the file's start, paused unless `startsPlaying`.
    ///
    /// - Parameters:
    ///   - path: A file path; relative paths start at the working directory.
    ///   - bufferFrames: The ring's size in frames (rounded up to a power of two), 4096 through 2^22.
    ///     Make it at least twice the engine's largest quantum (the default is four times the
    ///     largest any engine asks for), or every render call of that size underruns.
    ///   - startsPlaying: False (the default), as a player starts: the source renders silence,
    ///     consumes nothing and its ``clock`` stays at zero until ``play()``. True: it plays from the
    ///     first render call, as if ``play()`` had been called before any.
    /// - Throws: `SessionError` naming the file and what is wrong: code `fileError`
    ///   (missing, unreadable, a directory), `mediaUnreadable` (not media, damaged, truncated before
    ///   any audio, a codec this FFmpeg build cannot decode), `noAudioTrack` (a video without sound),
    ///   `invalidValue` (a ring size out of range) or `engineUnavailable` (no thread could be started).
    public init(
        path: String, bufferFrames: Int = MediaFileSource.defaultBufferFrames, startsPlaying: Bool = false
    ) throws(SessionError) {
        guard bufferFrames >= 4096, bufferFrames <= 1 << 22 else {
            throw .invalidValue("media buffer size", Double(bufferFrames), fix: "use 4096 through 4194304 frames")
        }
        let decoder = try MediaDecoder(path: path)
        let shared = try PlaybackShared(capacity: bufferFrames, playing: startsPlaying)
        let hub = EventHub()
        let wakeup = DecoderWakeup()
        let loop = DecoderLoop(shared: shared, hub: hub, decoder: decoder, wakeup: wakeup)
        try loop.prefill()
        self.path = path
        self.info = decoder.info
        self.duration = decoder.duration
        self.bufferFrames = shared.ring.capacity
        self.shared = shared
        self.hub = hub
        self.loop = loop
        self.wakeup = wakeup
        self.scratch = .allocate(capacity: Self.scratchFrames * 2)
        self.scratch.initialize(repeating: 0, count: Self.scratchFrames * 2)
        guard thread.start({ loop.run() }) else {
            throw SessionError(
                code: .engineUnavailable,
                message: "no decoder thread could be started for media file '\(path)': the process is out of "
                    + "threads or memory; close other sources")
        }
    }

    /// Opens the media file at a `file:` URL; see ``init(path:bufferFrames:startsPlaying:)``.
    ///
    /// - Throws: `SessionError` as ``init(path:bufferFrames:startsPlaying:)`` does, and `fileError`
    ///   for a URL that is not a file URL.
    public convenience init(
        url: URL, bufferFrames: Int = MediaFileSource.defaultBufferFrames, startsPlaying: Bool = false
    ) throws(SessionError) {
        guard url.isFileURL else {
            throw SessionError(
                code: .fileError,
                message: "media URL '\(url.absoluteString)' is not a file URL: download it to a file and pass that")
        }
        try self.init(path: url.path, bufferFrames: bufferFrames, startsPlaying: startsPlaying)
    }

    deinit {
        shared.stop.store(true, ordering: .releasing)
        wakeup.wake()
        thread.join()
        hub.finish()
        scratch.deallocate()
    }

    // MARK: Control

    /// Plays from where the source is (fading in over 5 ms). At the end of the file, does nothing
    /// until a ``seek(to:)``.
    public func play() {
        shared.playing.store(true, ordering: .releasing)
        wakeup.wake()
    }

    /// Stops playing (fading out over 5 ms) and holds the position; the decoder keeps the ring full,
    /// so ``play()`` resumes at once.
    public func pause() {
        shared.playing.store(false, ordering: .releasing)
        wakeup.wake()
    }

    /// Whether the source plays or is paused (from the start unless it was made with `startsPlaying`).
    public var isPlaying: Bool { shared.playing.load(ordering: .acquiring) }

    /// Whether playback goes on from the start of the file at its end (reported as
    /// ``MediaEvent/looped``) instead of ending (``MediaEvent/endOfStream``). Off by default. Set it
    /// before the end is heard for it to count at that end.
    public var isLooping: Bool {
        get { shared.looping.load(ordering: .acquiring) }
        set {
            shared.looping.store(newValue, ordering: .releasing)
            // A decoder that had finished looks again (and says when it has): waitUntilBuffered waits for it.
            if newValue { shared.decoderFinished.store(false, ordering: .releasing) }
            wakeup.wake()
        }
    }

    /// Moves playback to `time` of media time. The ring is flushed: from the next render call the
    /// source plays nothing from before the seek (the last sample decays over 5 ms), then the audio
    /// from `time`, fading in over 5 ms, once the decoder has it (``MediaEvent/seeked(to:)``). The
    /// seek is exact in every container: the first frame played is the frame at `time`, the same
    /// sample a decode of the file from its start plays there (the decoder starts the codec's
    /// pre-roll before it and drops what precedes it). The
    /// ``clock`` reads `time` from this call on. A time past the end plays nothing and ends the
    /// stream (``MediaEvent/endOfStream``), or loops when ``isLooping``.
    ///
    /// - Throws: `SessionError` with code `invalidValue` for a negative time.
    public func seek(to time: Duration) throws(SessionError) {
        guard time >= .zero else {
            throw .invalidValue("seek time", time.inSeconds, fix: "seek to a media time of zero or more")
        }
        let frames = AudioFormat.standard.frames(in: time)
        control.withLock { _ in
            shared.seekTarget.store(frames, ordering: .relaxed)
            shared.seekRequest.add(1, ordering: .releasing)
        }
        wakeup.wake()
    }

    /// The media time of the audio the engine has been given: where the last frame the render side
    /// delivered sits in the file. It advances only with rendered frames; after ``seek(to:)`` it
    /// reads the seek's time until the new audio plays.
    public var clock: Duration {
        let requested = shared.seekRequest.load(ordering: .acquiring)
        if requested != shared.renderSeek.load(ordering: .acquiring) {
            return AudioFormat.standard.duration(ofFrames: shared.seekTarget.load(ordering: .acquiring))
        }
        return AudioFormat.standard.duration(ofFrames: shared.clockFrames.load(ordering: .acquiring))
    }

    /// The media time the listener hears at `instant` on the monotonic clock: the clock a picture
    /// follows. Call it from the display loop with the instant the next frame will be shown, and show
    /// the frame whose timestamp it returns.
    ///
    /// It is computed from the instants the engine said the source's frames are heard at
    /// (``render(into:frames:heardAt:)``: on PipeWire the graph's and the device's latency for the
    /// stream's route plus the engine's own queue, 150 to 250 ms on Bluetooth headphones; on the
    /// offline engine its timeline, exactly), and runs smoothly between render calls:
    /// - while playing, it advances with the instant, to the nanosecond;
    /// - it stops where the audio delivered so far stops: a pause or an underrun is heard a latency
    ///   after the source took it up, and the clock stops then, at the last frame heard;
    /// - after ``seek(to:)`` it reads the seek's time at once, and holds it until the seek's first
    ///   frame is heard, then advances from it;
    /// - a loop is heard when it plays: the clock goes back to the start then, not when it is
    ///   decoded;
    /// - a change of the route's latency moves it once, to what is heard on the new route.
    ///
    /// On an engine that never says when its frames are heard, it is ``clock``.
    public func clock(at instant: MonotonicInstant) -> Duration {
        let requested = shared.seekRequest.load(ordering: .acquiring)
        if requested != shared.timelineSeek.load(ordering: .acquiring) {
            return AudioFormat.standard.duration(ofFrames: shared.seekTarget.load(ordering: .acquiring))
        }
        guard shared.timed.load(ordering: .acquiring), let heard = timeline.heard(at: Int(instant.nanoseconds)) else {
            return clock
        }
        return AudioFormat.standard.duration(ofFrames: heard.media) + .nanoseconds(heard.nanoseconds)
    }

    /// The media time the listener hears now: ``clock(at:)`` at ``MonotonicInstant/now``.
    public var heardClock: Duration { clock(at: .now) }

    /// Decoded frames waiting in the ring.
    public var bufferedFrames: Int { shared.ring.availableToRead }

    /// Render calls that found the ring short (the decoder fell behind), each also reported as
    /// ``MediaEvent/underrun(frames:)``.
    public var underrunCount: Int { shared.underrunCount.load(ordering: .relaxed) }

    /// Frames played as silence because the ring was short, over all underruns.
    public var underrunFrames: Int { shared.underrunFrames.load(ordering: .relaxed) }

    /// Blocks the calling thread until the ring is full (or holds the rest of the file) at the latest
    /// seek's position, or `timeout` passes. Returns whether it is. It wakes the decoder and sleeps on
    /// a condition the decoder signals as it writes. `OfflineEngine` waits by itself (see
    /// ``waitUntilReady(frames:timeout:)``); other hosts that render faster than real time call this
    /// before each stretch of rendering so the decoder is not outrun. Never call it on a real-time
    /// thread.
    @discardableResult
    public func waitUntilBuffered(timeout: Duration = .seconds(5)) -> Bool {
        let shared = self.shared
        wakeup.wake()
        return wakeup.wait(until: Self.deadline(after: timeout)) {
            let seek = shared.seekRequest.load(ordering: .acquiring)
            let buffered = shared.seekBuffered.load(ordering: .acquiring) == seek
            let full =
                shared.ring.availableToRead >= shared.ring.capacity - shared.reserveFrames
                || shared.decoderFinished.load(ordering: .acquiring)
            return buffered && full
        }
    }

    /// Blocks the calling thread until the next render call of `frames` frames can be served without
    /// an underrun: the latest seek is handled and the ring holds `frames` frames of its audio (at most
    /// the ring's steady fill), or the rest of the file. A paused source is ready at once (it renders
    /// silence). It wakes the decoder when the ring is below its low watermark, so a host rendering
    /// faster than real time keeps it decoding, and waits on a condition the decoder signals.
    ///
    /// `OfflineEngine` calls it for every playing stream before each render call, so an offline
    /// render never outruns the decoder. Never call it on a real-time thread.
    ///
    /// - Throws: `SessionError` with code `engineUnavailable`, naming the file and how far the decoder
    ///   got, when `timeout` passes first (a decoder starved of CPU, a file on a stalled disk).
    public func waitUntilReady(frames: Int, timeout: Duration) throws(SessionError) {
        let shared = self.shared
        guard shared.playing.load(ordering: .acquiring) else { return }
        let needed = min(max(frames, 1), shared.ring.capacity - shared.reserveFrames)
        let readable = { () -> Int? in
            // nil until the decoder has taken up the latest seek; then the frames of its audio. A full
            // ring (stale audio before a seek the render side has yet to drop) is all there can be.
            let seek = shared.seekRequest.load(ordering: .acquiring)
            guard shared.decodedSerial.load(ordering: .acquiring) == seek else { return nil }
            if shared.decoderFinished.load(ordering: .acquiring) || shared.ring.availableToWrite == 0 {
                return Int.max
            }
            let stale = max(
                0, shared.segmentStart.load(ordering: .relaxed) - shared.renderConsumed.load(ordering: .acquiring))
            return shared.ring.availableToRead - stale
        }
        let now = readable()
        if let now, now >= needed, now > shared.lowWatermark { return }
        wakeup.wake()
        if let now, now >= needed { return }
        let ready = wakeup.wait(until: Self.deadline(after: timeout)) { (readable() ?? 0) >= needed }
        guard ready else {
            let got = readable().map { "\(min($0, needed)) of the \(needed) frames" } ?? "nothing"
            throw SessionError(
                code: .engineUnavailable,
                message: "media file '\(path)' has \(got) the next render call needs after waiting "
                    + "\(timeout) for its decoder thread: the machine is too busy to decode it, or the file "
                    + "reads too slowly; render in smaller quanta, free the CPU, or allow a longer timeout")
        }
    }

    /// The monotonic-clock deadline `timeout` from now, in nanoseconds (at most a day away).
    private static func deadline(after timeout: Duration) -> Int {
        let capped = min(max(timeout, .zero), .seconds(86_400))
        return DecoderWakeup.monotonicNow() + Int(capped.inNanoseconds)
    }

    // MARK: Events

    /// A new stream of the source's events from now on, starting with what happened before anyone
    /// listened (such as damage found while the source was made, the first 64 events): every new
    /// stream starts with those, not only the first. Every subscriber
    /// gets every event, in order; stop iterating to unsubscribe. The stream finishes when the
    /// source is released.
    public var events: AsyncStream<MediaEvent> { hub.subscribe() }

    /// Called with every event on the source's decoder thread, as it happens, after the events emitted
    /// before anyone listened (as ``events`` starts with them). Keep it short: the decoder waits for it.
    public var eventHandler: (@Sendable (MediaEvent) -> Void)? {
        get { hub.handler }
        set { hub.handler = newValue }
    }

    // MARK: Testing

    /// Slows the decoder thread down by `delay` before each decoding step, so a test can starve
    /// the ring and see underruns counted.
    package func setDecodeDelayForTesting(_ delay: Duration) {
        shared.decodeDelayNanoseconds.store(Int(delay.inNanoseconds), ordering: .relaxed)
        wakeup.wake()
    }

    // MARK: Render side

    /// Writes up to `frames` frames of the file's audio, 48 kHz stereo interleaved, and returns the
    /// number written: all of them while playing or paused (silence), fewer at the end of the file
    /// or when the decoder fell behind (an underrun, counted and reported). Real-time safe.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        render(into: buffer, frames: frames, heardAt: nil)
    }

    /// Renders as ``render(into:frames:)`` does, noting when the listener hears the frames (`heardAt`,
    /// from the engine) for ``clock(at:)``. Real-time safe.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int, heardAt: MonotonicInstant?) -> Int {
        guard frames > 0 else { return 0 }
        let shared = self.shared
        if let heardAt {
            callHeardAt = Int(heardAt.nanoseconds)
            if !shared.timed.load(ordering: .relaxed) { shared.timed.store(true, ordering: .releasing) }
        } else {
            callHeardAt = -1
        }
        let playing = shared.playing.load(ordering: .acquiring)
        if !started {
            // A source paused before its first render starts silent rather than fading its start out.
            started = true
            runGain = playing ? 1 : 0
        }
        if !seekPending, shared.seekRequest.load(ordering: .acquiring) != serial {
            seekPending = true
            beginDiscontinuity()
        }
        let step = 1 / Float(Self.declickFrames)
        var done = 0
        rendering: while done < frames {
            if seekPending { takeUpSeek() }
            let audible = playing && !seekPending
            if !audible, runGain == 0 {
                writeSilence(buffer + done &* 2, frames: frames &- done, step: step)
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
                    beginDiscontinuity()
                    continue rendering
                }
                if marker.index > consumed {
                    limit = min(limit, marker.index &- consumed)
                    break
                }
                shared.markers.pop()
                if marker.kind == .discontinuity {
                    // A gap or a dropped frame in the file: the last sample decays, the audio fades in.
                    beginDiscontinuity()
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
                    shared.endHeard.store(serial, ordering: .releasing)
                    shared.endsHeard.add(1, ordering: .relaxed)
                    beginDiscontinuity()
                    break rendering
                }
            }
            if !audible {
                limit = min(limit, Self.fadeFrames(runGain, step: step))
            }
            let count = min(limit, available)
            if count > 0 {
                let output = buffer + done &* 2
                let got = shared.ring.read(into: output, frames: count)
                shape(output, frames: got, audible: audible, step: step)
                noteHeard(offset: done, media: mediaPosition, frames: got)
                consumed &+= got
                mediaPosition &+= got
                done &+= got
                awaitingSeekData = false
                continue
            }
            // The ring is dry.
            if !audible {
                runGain = 0
                continue
            }
            if awaitingSeekData {
                // A seek's first frames are on their way: part of the seek, not an underrun.
                writeSilence(buffer + done &* 2, frames: frames &- done, step: step)
                done = frames
                break
            }
            if shared.seekRequest.load(ordering: .acquiring) != serial {
                seekPending = true
                beginDiscontinuity()
                continue
            }
            shared.underrunFrames.add(frames &- done, ordering: .relaxed)
            shared.underrunCount.add(1, ordering: .relaxed)
            beginDiscontinuity()
            break
        }
        if done < frames, tailGain > 0 {
            // After an underrun or the end: the last sample's decay, counted as written.
            let decay = min(frames &- done, Self.fadeFrames(tailGain, step: step))
            writeSilence(buffer + done &* 2, frames: decay, step: step)
            done &+= decay
        }
        shared.clockFrames.store(mediaPosition, ordering: .relaxed)
        shared.renderConsumed.store(consumed, ordering: .releasing)
        shared.renderSeek.store(serial, ordering: .releasing)
        return done
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
            runGain = 0
            seekRunPending = true
            return
        }
    }

    /// Notes in the heard timeline that `frames` frames from media frame `media`, written `offset`
    /// frames into this render call, are heard from the call's instant on: they extend the run
    /// before them when they follow it in media and in time (within ``resyncThreshold``), or start a
    /// new one. A call the engine gave no instant continues the run it follows, or is not noted.
    @inline(__always)
    private func noteHeard(offset: Int, media: Int, frames: Int) {
        let runEnd = runStart &+ timeline.nanoseconds(ofFrames: runFrames)
        let at: Int
        if callHeardAt >= 0 {
            at = callHeardAt &+ timeline.nanoseconds(ofFrames: offset)
        } else if runOpen, !seekRunPending, media == runMedia &+ runFrames {
            at = runEnd
        } else {
            return
        }
        let drift = at &- runEnd
        if runOpen, !seekRunPending, media == runMedia &+ runFrames, drift <= Self.resyncThreshold,
            drift >= -Self.resyncThreshold
        {
            runFrames &+= frames
            timeline.extend(to: runFrames)
            return
        }
        runStart = at
        runMedia = media
        runFrames = frames
        runOpen = true
        timeline.begin(start: at, media: media, frames: frames, startsSeek: seekRunPending)
        if seekRunPending {
            seekRunPending = false
            shared.timelineSeek.store(serial, ordering: .releasing)
        }
    }

    /// Frames a fade at `gain` takes to reach zero in steps of `step` (a hair under, so float
    /// rounding never adds a frame).
    @inline(__always)
    private static func fadeFrames(_ gain: Float, step: Float) -> Int {
        max(0, Int((gain / step - 1e-3).rounded(.up)))
    }

    /// The last sample heard becomes a tail that decays to zero, and new audio fades in from zero.
    @inline(__always)
    private func beginDiscontinuity() {
        tailLeft = lastLeft
        tailRight = lastRight
        // From silence there is no step to smooth.
        tailGain = abs(lastLeft) + abs(lastRight) > 1e-6 ? 1 : 0
        runGain = 0
    }

    /// Applies the fade (towards 1 while `audible`, towards 0 otherwise) and adds the decaying tail.
    @inline(__always)
    private func shape(_ samples: UnsafeMutablePointer<Float>, frames: Int, audible: Bool, step: Float) {
        guard frames > 0 else { return }
        let target: Float = audible ? 1 : 0
        if runGain == target, tailGain == 0, target == 1 {
            lastLeft = samples[(frames &- 1) &* 2]
            lastRight = samples[(frames &- 1) &* 2 &+ 1]
            return
        }
        var runGain = self.runGain
        var tailGain = self.tailGain
        let tailLeft = self.tailLeft
        let tailRight = self.tailRight
        var left: Float = 0
        var right: Float = 0
        var index = 0
        for _ in 0..<frames {
            if runGain < target {
                runGain += step
                if runGain > target - 1e-4 { runGain = target }
            } else if runGain > target {
                runGain -= step
                if runGain < target + 1e-4 { runGain = target }
            }
            left = samples[index] * runGain + tailLeft * tailGain
            right = samples[index &+ 1] * runGain + tailRight * tailGain
            if tailGain > 0 {
                tailGain -= step
                if tailGain < 1e-4 { tailGain = 0 }
            }
            samples[index] = left
            samples[index &+ 1] = right
            index &+= 2
        }
        self.runGain = runGain
        self.tailGain = tailGain
        lastLeft = left
        lastRight = right
    }

    /// Writes the decaying tail, then zeros.
    @inline(__always)
    private func writeSilence(_ samples: UnsafeMutablePointer<Float>, frames: Int, step: Float) {
        guard frames > 0 else { return }
        if tailGain == 0 {
            samples.update(repeating: 0, count: frames &* 2)
            lastLeft = 0
            lastRight = 0
            return
        }
        var tailGain = self.tailGain
        var index = 0
        for _ in 0..<frames {
            samples[index] = tailLeft * tailGain
            samples[index &+ 1] = tailRight * tailGain
            if tailGain > 0 {
                tailGain -= step
                if tailGain < 1e-4 { tailGain = 0 }
            }
            index &+= 2
        }
        self.tailGain = tailGain
        lastLeft = samples[(frames &- 1) &* 2]
        lastRight = samples[(frames &- 1) &* 2 &+ 1]
    }
}
