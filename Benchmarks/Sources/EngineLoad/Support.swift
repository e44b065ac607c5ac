// engine-load's parts every mode uses: its arguments and output, the sines it plays, the scene of
// streams and the monitor that hears them, child processes, and the process's memory and threads.
import CHeap
import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("engine-load: \(message)\n".utf8))
    exit(2)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let layout: StreamLayout = CommandLine.arguments.contains("--mixed") ? .mixedOverlays : .perStream
let arguments = Array(CommandLine.arguments.dropFirst().filter { $0 != "--mixed" })

func number(_ index: Int, _ name: String) -> Int {
    guard arguments.count > index, let value = Int(arguments[index]) else { fail("missing \(name)") }
    return value
}

let mainTone = 440.0
let mainAmplitude: Float = 0.5

/// A sine that counts the frames its stream's render path pulled: whether this one stream plays.
/// Real-time safe (one relaxed atomic add per callback).
final class CountedSine: AudioSource {
    private let sine: SineSource
    private let pulled = Atomic<Int>(0)

    init(frequency: Double, amplitude: Float) throws {
        sine = try SineSource(frequency: frequency, amplitude: amplitude)
    }

    /// Frames pulled so far.
    var frames: Int { pulled.load(ordering: .relaxed) }

    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let written = sine.render(into: buffer, frames: frames)
        pulled.add(written, ordering: .relaxed)
        return written
    }
}

/// A session on a PipeWire engine with one main sine and `count - 1` quiet overlay sines.
final class Scene {
    let engine: PipeWireEngine
    let session: SharedSession
    let lease: SessionLease
    var handles: [StreamHandle] = []
    /// Every stream's source, main first.
    var sources: [CountedSine] = []

    init(streams count: Int, name: String = "engine-load") throws {
        engine = try PipeWireEngine(applicationName: name, layout: layout)
        session = SharedSession(engine: engine)
        lease = try session.acquire(.generic, owner: "bench")
        let main = try CountedSine(frequency: mainTone, amplitude: mainAmplitude)
        sources.append(main)
        handles.append(try session.openMainStream(source: main))
        for index in 1..<max(1, count) {
            let source = try CountedSine(frequency: 1000 + Double(index) * 7, amplitude: 0.001)
            sources.append(source)
            handles.append(
                try session.openStream(StreamDescriptor(name: "overlay \(index)", role: .game), source: source))
        }
    }

    /// Frames pulled by each stream so far, main first.
    var framesPulled: [Int] { sources.map(\.frames) }

    /// Waits until the data thread has run `cycles` more callbacks (the streams are playing).
    func waitUntilPlaying(cycles: Int = 50, timeout: Duration = .seconds(10)) -> Bool {
        let start = engine.processCycles
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if engine.processCycles - start >= cycles { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    func close() {
        for handle in handles { handle.close() }
        lease.release()
        session.close()
        engine.shutdown()
    }
}

/// Records the default sink's monitor through an engine of its own.
final class Monitor {
    let engine: PipeWireEngine
    let ring: AudioRingBuffer
    var samples: [Float] = []

    init() throws {
        engine = try PipeWireEngine(applicationName: "engine-load monitor")
        ring = try AudioRingBuffer(minimumCapacity: 1 << 21)
        try engine.startMonitorRecording(into: ring)
    }

    func poll() { samples += ring.readAll() }

    /// Frames recorded so far: the recording position of what happens next.
    func mark() -> Int {
        poll()
        return samples.count / 2
    }

    func record(_ seconds: Double) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            Thread.sleep(forTimeInterval: 0.02)
            poll()
        }
    }

    /// Drops what was recorded (keeps memory flat over many trials).
    func reset() {
        poll()
        samples.removeAll(keepingCapacity: true)
    }

    func stop() {
        engine.stopMonitorRecording()
        engine.shutdown()
    }

    /// The level of `frequency` (left channel) over `frames` frames from `from`, dBFS (Goertzel).
    func level(_ frequency: Double, from: Int, frames: Int) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / 48_000)
        var s1 = 0.0
        var s2 = 0.0
        for frame in from..<(from + frames) {
            let s = Double(samples[frame * 2]) + coefficient * s1 - s2
            s2 = s1
            s1 = s
        }
        let power = max(0, s1 * s1 + s2 * s2 - coefficient * s1 * s2)
        return 20 * log10(max(2 * power.squareRoot() / Double(frames), 1e-9))
    }

    /// Milliseconds from `mark` to the centre of the first 10 ms window (hop 1 ms) whose level of
    /// `frequency` is at or below `threshold`; nil if none. The centre, not the end: a window's level
    /// is that of its middle on a ramp, so the end would add 5 ms that no listener hears.
    func reach(_ frequency: Double, atOrBelow threshold: Double, from mark: Int) -> Double? {
        var start = mark
        while start + 480 <= samples.count / 2 {
            if level(frequency, from: start, frames: 480) <= threshold { return Double(start + 240 - mark) / 48 }
            start += 48
        }
        return nil
    }
}

/// Starts a command (from PATH or a path) with its output in `outputPath`. posix_spawn, not
/// Foundation's Process: Process waits on SIGCHLD delivery, seen to hang here when the command
/// started the daemons.
func spawn(_ command: String, _ arguments: [String], outputPath: String = "/dev/null") -> pid_t? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = ([command] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    return posix_spawnp(&pid, command, &actions, nil, argv, environ) == 0 ? pid : nil
}

/// Waits for a child; its exit status, or 128 + the signal that ended it.
func reap(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { return -1 }
    }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}

/// Runs a command and waits for it; returns its exit status and output (through a file: a daemon
/// the command starts would hold a pipe open forever).
@discardableResult
func run(_ command: String, _ arguments: [String]) -> (status: Int32, output: String) {
    let outputPath = "/tmp/engine-load-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
    defer { unlink(outputPath) }
    guard let pid = spawn(command, arguments, outputPath: outputPath) else { return (-1, "cannot start \(command)") }
    let status = reap(pid)
    return (status, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
}

let tone = "/tmp/engine-load-tone-\(getpid()).wav"

/// A 30 s stereo 16-bit WAV of a 660 Hz sine at amplitude 0.5, for pw-play.
func writeTone() {
    var data = Data()
    let frames = 48_000 * 30
    func le32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    func le16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    data.append(contentsOf: Array("RIFF".utf8))
    le32(UInt32(36 + frames * 4))
    data.append(contentsOf: Array("WAVEfmt ".utf8))
    le32(16)
    le16(1)
    le16(2)
    le32(48_000)
    le32(48_000 * 4)
    le16(4)
    le16(16)
    data.append(contentsOf: Array("data".utf8))
    le32(UInt32(frames * 4))
    var samples = [Int16](repeating: 0, count: frames * 2)
    for frame in 0..<frames {
        let value = Int16(16_383 * sin(2 * Double.pi * 660 * Double(frame) / 48_000))
        samples[frame * 2] = value
        samples[frame * 2 + 1] = value
    }
    samples.withUnsafeBytes { data.append(contentsOf: $0) }
    _ = FileManager.default.createFile(atPath: tone, contents: data)
}

func report(_ name: String, _ values: [Double]) {
    for value in values { say("\(name) \(String(format: "%.2f", value))") }
}

/// Watches, from a thread of its own, for every stream of `scene` to pull `frames` more frames than
/// when it was made; records when they all have.
final class BackWatcher: Sendable {
    private let state = Mutex<(back: ContinuousClock.Instant?, playing: Int, done: Bool)>((nil, 0, false))

    init(scene: Scene, frames: Int) {
        let sources = scene.sources
        let engine = scene.engine
        let base = sources.map(\.frames)
        let thread = Thread { [self] in
            while !self.state.withLock({ $0.done }) {
                let pulled = sources.map(\.frames)
                let playing = zip(pulled, base).filter { $0 - $1 >= frames }.count
                let isBack = playing == base.count && engine.isConnected
                self.state.withLock {
                    $0.playing = playing
                    if isBack {
                        $0.back = ContinuousClock.now
                        $0.done = true
                    }
                }
                Thread.sleep(forTimeInterval: 0.001)
            }
        }
        thread.start()
    }

    /// How many streams were pulling at the last look.
    var playing: Int { state.withLock { $0.playing } }

    /// When every stream was back, waiting for it until `deadline`; nil if they were not by then.
    func wait(until deadline: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        while ContinuousClock.now < deadline {
            if let back = state.withLock({ $0.back }) { return back }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return state.withLock {
            $0.done = true
            return $0.back
        }
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func format(_ ms: Double) -> String { String(format: "%.1f", ms) }

/// The daemon's nodes that belong to this process's engines (named `sharedsession.<pid>.…`).
func ourNodes() -> Int {
    run("/usr/bin/pw-cli", ["ls", "Node"]).output.components(separatedBy: "node.name = \"sharedsession.\(getpid()).")
        .count - 1
}

/// This process's heap in use (glibc's count of allocated bytes, not what the allocator keeps), in KiB.
func heapKiB() -> Int { cheap_in_use() / 1024 }

/// This process's resident memory, in KiB.
func residentKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
}

/// One thread of this process as /proc/self/task says: its name, context switches and CPU time.
struct ThreadSample {
    let name: String
    let voluntary: Int
    let involuntary: Int
    /// CPU time in nanoseconds (schedstat's run time: finer than stat's 10 ms ticks).
    let cpu: Int
}

/// Every thread of this process now, by thread id.
func threadSamples() -> [Int: ThreadSample] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    var samples: [Int: ThreadSample] = [:]
    for task in tasks {
        guard let tid = Int(task),
            let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8),
            let schedstat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8)
        else { continue }
        func field(_ key: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(key + ":") } ?? ""
            return Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
        }
        let name =
            status.split(separator: "\n").first { $0.hasPrefix("Name:") }.map {
                $0.dropFirst("Name:".count).trimmingCharacters(in: .whitespaces)
            } ?? "?"
        let cpu = Int(schedstat.split(separator: " ").first ?? "") ?? 0
        samples[tid] = ThreadSample(
            name: name, voluntary: field("voluntary_ctxt_switches"),
            involuntary: field("nonvoluntary_ctxt_switches"), cpu: cpu)
    }
    return samples
}
