// media-load: the CPU that MediaFileSources cost the process, for the media figures of BENCHMARKS.md
// and the SharedSessionMedia measurements article.
//
//   media-load paused COUNT SECONDS    COUNT sources, buffered and paused, nothing pulling them
//   media-load playing COUNT SECONDS   COUNT sources playing, pulled as a real-time consumer would:
//                                      one thread renders one 1024-frame quantum from each every
//                                      21.333 ms (on an absolute schedule, as a sound server's graph)
//
// Each mode prints one line, "media-load MODE sources=N seconds=S cpu-ms=X cpu-percent=Y
// consumer-ms=C decoders-percent=D underruns=U wakeups-per-second=W": user+system time of the whole
// process over the window (getrusage), the consumer thread's own share, what is left (the decoder
// threads and the idle main thread) as a percentage of one core, and the process's voluntary context
// switches per second (each a thread going to sleep, so about its wake-ups). The media is 30 s of AAC in MP4 (the movie of
// the watch-party), made by `ffmpeg` into MEDIA_LOAD_DIR (default /tmp/media-load) the first time,
// and looped, so any window length plays real decoding.
import Foundation
import SharedSession
import SharedSessionMedia
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("media-load: \(message)\n".utf8))
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3, ["paused", "playing"].contains(arguments[0]),
    let count = Int(arguments[1]), count >= 1, let seconds = Double(arguments[2]), seconds > 0
else { fail("usage: media-load paused|playing COUNT SECONDS") }
let playing = arguments[0] == "playing"

/// The movie's soundtrack: 30 s of two sines, AAC in MP4.
func makeMedia() -> String {
    let directory = ProcessInfo.processInfo.environment["MEDIA_LOAD_DIR"] ?? "/tmp/media-load"
    let path = directory + "/movie.mp4"
    if FileManager.default.fileExists(atPath: path) { return path }
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let partial = directory + "/partial-\(getpid()).mp4"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
        "sine=frequency=220:sample_rate=48000:duration=30", "-f", "lavfi", "-i",
        "sine=frequency=330:sample_rate=48000:duration=30", "-filter_complex", "[0][1]amerge=inputs=2",
        "-c:a", "aac", "-b:a", "160k", partial,
    ]
    do { try process.run() } catch { fail("ffmpeg could not be started (Scripts/install media): \(error)") }
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fail("ffmpeg failed to make \(path)") }
    do { try FileManager.default.moveItem(atPath: partial, toPath: path) } catch { fail("\(error)") }
    return path
}

enum Time {
    /// User plus system time, in microseconds, of the whole process or of the calling thread.
    static func cpuMicroseconds(thread: Bool) -> Int {
        var usage = rusage()
        // RUSAGE_THREAD (1) is Linux's; Glibc's Swift overlay does not import it.
        getrusage(thread ? 1 : __rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + usage.ru_utime.tv_usec
            + usage.ru_stime.tv_usec
    }

    /// Voluntary context switches of the whole process: how often its threads went to sleep.
    static func sleeps() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_nvcsw
    }

    /// The monotonic clock, in nanoseconds.
    static func now() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }

    /// Sleeps until the monotonic clock reads `deadline`.
    static func sleep(until deadline: Int) {
        var time = timespec(tv_sec: deadline / 1_000_000_000, tv_nsec: deadline % 1_000_000_000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }
}

let path = makeMedia()
var sources: [MediaFileSource] = []
for _ in 0..<count {
    do {
        let source = try MediaFileSource(path: path, startsPlaying: false)
        source.isLooping = true
        sources.append(source)
    } catch { fail("\(error)") }
}
for source in sources where !source.waitUntilBuffered(timeout: .seconds(30)) {
    fail("\(source.path) was not buffered within 30 s")
}
if playing { for source in sources { source.play() } }

let quantum = 1024
let period = quantum * 1_000_000_000 / AudioFormat.standard.sampleRate
let windowNanoseconds = Int(seconds * 1e9)
let consumerMicroseconds = Atomic<Int>(0)
let consumerDone = Atomic<Bool>(false)
let all = sources
let start = Time.now()
let before = Time.cpuMicroseconds(thread: false)
let sleepsBefore = Time.sleeps()
if playing {
    Thread.detachNewThread {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: quantum * 2)
        defer { buffer.deallocate() }
        let first = Time.cpuMicroseconds(thread: true)
        var deadline = start
        while deadline - start < windowNanoseconds {
            for source in all { _ = source.render(into: buffer, frames: quantum) }
            deadline += period
            Time.sleep(until: deadline)
        }
        consumerMicroseconds.store(Time.cpuMicroseconds(thread: true) - first, ordering: .relaxed)
        consumerDone.store(true, ordering: .releasing)
    }
}
Time.sleep(until: start + windowNanoseconds)
while playing, !consumerDone.load(ordering: .acquiring) { Time.sleep(until: Time.now() + 1_000_000) }
let total = Time.cpuMicroseconds(thread: false) - before
let sleeps = Time.sleeps() - sleepsBefore
let wall = Double(Time.now() - start) / 1e9
let consumer = consumerMicroseconds.load(ordering: .relaxed)
let underruns = sources.reduce(0) { $0 + $1.underrunCount }
let percent = Double(total) / 1e4 / wall
let decoders = Double(total - consumer) / 1e4 / wall
print(
    "media-load \(arguments[0]) sources=\(count) seconds=\(String(format: "%.2f", wall))"
        + " cpu-ms=\(String(format: "%.1f", Double(total) / 1000)) cpu-percent=\(String(format: "%.2f", percent))"
        + " consumer-ms=\(String(format: "%.1f", Double(consumer) / 1000))"
        + " decoders-percent=\(String(format: "%.2f", decoders)) underruns=\(underruns)"
        + " wakeups-per-second=\(String(format: "%.0f", Double(sleeps) / wall))")
