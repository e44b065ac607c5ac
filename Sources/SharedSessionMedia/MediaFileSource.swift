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
    // @unchecked: every stored property is a `let`. `reader` (a MediaRingReader, not Sendable) keeps
    // the render side's state and is called only by the render thread, one call at a time, as every
    // engine guarantees for a source; `shared` holds only atomics and the SPSC ring and marker queue,
    // whose producer is the decoder thread and whose consumer is the reader; `loop` is touched by its
    // own thread only.

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
    private let timeline: HeardTimeline
    private let hub: EventHub
    private let loop: DecoderLoop
    private let wakeup: DecoderWakeup
    private let thread = DecoderThread()
    private let control = Locked(())
    /// The render side: reads the ring, fades and notes when each frame is heard.
    private let reader: MediaRingReader

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
        let timeline = HeardTimeline(sampleRate: AudioFormat.standard.sampleRate)
        self.timeline = timeline
        self.reader = MediaRingReader(shared: shared, timeline: timeline)
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
        var needed = min(max(frames, 1), shared.ring.capacity - shared.reserveFrames)
        if shared.startedSeek.load(ordering: .acquiring) != shared.seekRequest.load(ordering: .acquiring) {
            // The render side starts a seek's audio with a reserve's worth of it (or all there is).
            needed = max(needed, shared.reserveFrames)
        }
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
        reader.render(into: buffer, frames: frames, heardAt: heardAt)
    }
}
