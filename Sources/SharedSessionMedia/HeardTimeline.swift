import SharedSession
import Synchronization

/// When the listener hears which media frames: the last few runs of continuous audio a source
/// rendered, each the instant its first frame is heard, its first media frame and its length. The
/// render side writes it; any thread reads it to answer ``MediaFileSource/clock(at:)``.
///
/// A run is continuous audio: media frames one after the other, heard one after the other. A
/// pause, an underrun, a seek, a loop or a change of the route's latency ends one and starts the
/// next, so an instant is always answered by the audio heard then, however long the route's latency
/// (a seek is heard a Bluetooth sink's 200 ms after the source took it up).
///
/// **Lock-free.** One writer (the render side) and any number of readers share the runs through a
/// sequence lock made of atomics: the writer makes the sequence odd, writes, and makes it even again;
/// a reader that saw it odd or changed reads again. The writer never waits, so the render side stays
/// real-time safe.
final class HeardTimeline: Sendable {
    /// One run's fields, each an atomic so a reader racing the writer reads torn values it then
    /// discards, never undefined behaviour.
    final class Run: Sendable {
        /// Nanoseconds on the monotonic clock at which the run's first frame is heard.
        let start = Atomic<Int>(0)
        /// The media frame of the run's first frame.
        let media = Atomic<Int>(0)
        /// Frames in the run so far.
        let frames = Atomic<Int>(0)
        /// Whether the run starts a seek's audio: instants before it read the seek's time.
        let startsSeek = Atomic<Bool>(false)
    }

    /// Runs kept: enough for the discontinuities of a few seconds of the longest latency.
    static let capacity = 8

    private let runs: [Run] = (0..<HeardTimeline.capacity).map { _ in Run() }
    private let sequence = Atomic<UInt>(0)
    /// Runs written since the source was made; the newest is at `(written - 1) % capacity`.
    private let written = Atomic<Int>(0)
    private let sampleRate: Int

    init(sampleRate: Int) {
        self.sampleRate = sampleRate
    }

    /// Nanoseconds `frames` frames last, rounded as ``AudioFormat/duration(ofFrames:)`` rounds.
    @inline(__always)
    func nanoseconds(ofFrames frames: Int) -> Int {
        (frames &* 1_000_000_000 &+ sampleRate / 2) / sampleRate
    }

    // MARK: Render side

    /// Starts a new run (render side only).
    @inline(__always)
    func begin(start: Int, media: Int, frames: Int, startsSeek: Bool) {
        let index = written.load(ordering: .relaxed)
        let run = runs[index % Self.capacity]
        let stamp = sequence.load(ordering: .relaxed)
        sequence.store(stamp &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        run.start.store(start, ordering: .relaxed)
        run.media.store(media, ordering: .relaxed)
        run.frames.store(frames, ordering: .relaxed)
        run.startsSeek.store(startsSeek, ordering: .relaxed)
        written.store(index &+ 1, ordering: .relaxed)
        sequence.store(stamp &+ 2, ordering: .releasing)
    }

    /// Sets the newest run's length (render side only).
    @inline(__always)
    func extend(to frames: Int) {
        let index = written.load(ordering: .relaxed)
        guard index > 0 else { return }
        let run = runs[(index &- 1) % Self.capacity]
        let stamp = sequence.load(ordering: .relaxed)
        sequence.store(stamp &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        run.frames.store(frames, ordering: .relaxed)
        sequence.store(stamp &+ 2, ordering: .releasing)
    }

    // MARK: Any thread

    /// The media frame heard at `instant` (nanoseconds on the monotonic clock) and the nanoseconds
    /// past it, or nil before the first run:
    /// - in a run: its first media frame plus the time since its start, up to its length (so the
    ///   time stops where the audio delivered so far ends: a pause, an underrun, the end);
    /// - before a seek's run started: the seek's first frame, held until it is heard (the newest
    ///   seek's, when several are still ahead of `instant`);
    /// - before the oldest run kept: that run's first frame.
    func heard(at instant: Int) -> (media: Int, nanoseconds: Int)? {
        while true {
            let stamp = sequence.load(ordering: .acquiring)
            if stamp & 1 == 1 { continue }
            let total = written.load(ordering: .relaxed)
            guard total > 0 else { return nil }
            var answer: (media: Int, nanoseconds: Int)?
            var seekAfter: Int?
            var oldest = 0
            var back = 0
            while back < min(total, Self.capacity) {
                let run = runs[(total &- 1 &- back) % Self.capacity]
                let start = run.start.load(ordering: .relaxed)
                let media = run.media.load(ordering: .relaxed)
                if start <= instant {
                    let length = nanoseconds(ofFrames: run.frames.load(ordering: .relaxed))
                    answer = seekAfter.map { ($0, 0) } ?? (media, min(instant &- start, length))
                    break
                }
                if seekAfter == nil, run.startsSeek.load(ordering: .relaxed) { seekAfter = media }
                oldest = media
                back &+= 1
            }
            atomicMemoryFence(ordering: .acquiring)
            guard sequence.load(ordering: .relaxed) == stamp else { continue }
            return answer ?? (seekAfter ?? oldest, 0)
        }
    }
}
