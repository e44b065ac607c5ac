import CRealtimeProbe
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The render kernel both engines run on their real-time thread makes no allocation, takes no lock
/// and makes no system call in steady playback: counted by the probe in Tests/CRealtimeProbe, not
/// assumed. Each counter has a positive control here: a source that does the forbidden thing inside
/// `render(into:frames:)`, run through the same kernel, makes the same measurement fail.
@Suite("Real-time render path", .probeInterposes)
struct RealtimeRenderTests {
    @Test("render kernel allocates nothing, locks nothing, makes no system call and never waits in steady playback")
    func renderKernelIsRealtimeSafe() throws {
        try Probe.require()
        let sine = try SineSource(frequency: 440, amplitude: 0.5)
        let buffer = try PCMBufferSource(samples: (0..<9600).map { Float($0 % 100) / 100 }, loops: true)
        let ring = try RingBufferSource(capacity: 1 << 18)
        ring.ring.write([Float](repeating: 0.25, count: 2 * 125_000))
        let run = try KernelRun(sources: [sine, buffer, ring])
        print("[measure] render kernel: \(run.summary)")
        #expect(run.callbacks == 144)
        // 4 playing rounds × 3 streams × 8 callbacks heard; the paused and the suspended round silent.
        #expect(
            run.audibleCallbacks == 96,
            "\(run.audibleCallbacks) callbacks rendered audio (quietest \(run.quietest) dBFS)")
        #expect(run.silentCallbacks == 42, "paused or suspended callbacks after the first of their round")
        #expect(run.counts.allocations == 0, "last counted call: \(run.lastCall)")
        #expect(run.counts.frees == 0, "last counted call: \(run.lastCall)")
        #expect(run.counts.locks == 0, "last counted call: \(run.lastCall)")
        #expect(run.counts.syscalls == 0, "last counted call: \(run.lastCall)")
        #expect(run.voluntarySwitches == 0)
        #expect(run.isClean)
    }

    @Test("the loudness meter measures without allocating, locking or making a system call")
    func loudnessMeterIsRealtimeSafe() throws {
        try Probe.require()
        let meter = try LoudnessMeter()
        let samples = (0..<2048).map { Float(sin(Double($0) * 0.13) * 0.3) }
        meter.add(samples, frames: 1024)  // anything lazy happens before the probe is armed
        // The samples are held past the disarm: an optimised build frees an array after its last use,
        // which would be counted inside the armed stretch.
        withExtendedLifetime(samples) {
            CRealtimeProbe_reset()
            CRealtimeProbe_armCurrentThread()
            for _ in 0..<200 { samples.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: 1024) } }
            CRealtimeProbe_disarmCurrentThread()
        }
        let counts = CRealtimeProbe_read()
        let culprit = String(cString: CRealtimeProbe_lastCall())
        print(
            "[measure] loudness meter, 200 quanta of 1024 frames: \(counts.allocations) allocations, \(counts.locks) "
                + "locks, \(counts.syscalls) system calls"
        )
        #expect(counts.allocations == 0, "last counted call: \(culprit)")
        #expect(counts.frees == 0, "last counted call: \(culprit)")
        #expect(counts.locks == 0, "last counted call: \(culprit)")
        #expect(counts.syscalls == 0, "last counted call: \(culprit)")
        #expect(meter.momentary > -20 && meter.momentary < -5)
    }

    @Test(
        "a kernel that locks, allocates, reads a clock, writes, sleeps, waits on a contended Mutex, takes a pthread mutex or writes to a buffered FILE fails the probe, named",
        arguments: Fault.allCases)
    func brokenKernelFailsTheProbe(fault: Fault) throws {
        try Probe.require()
        let source = try MisbehavingSource(fault)
        let run = try KernelRun(sources: [source])
        print("[measure] render kernel with a source that \(fault): \(run.summary)")
        #expect(!run.isClean, "the probe missed \(fault)")
        #expect(run.audibleCallbacks == 32, "the broken kernel still rendered its tone")
        // Every broken source is named: the last call the probe counted of the kind that broke the rule.
        switch fault {
        case .lockLocked:
            #expect(run.counts.locks >= 32, "one Locked acquisition per callback that pulled the source")
            #expect(run.lastCall == "Locked.withLock")
            #expect(run.lastCalls.locks == "Locked.withLock")
        case .allocate:
            #expect(run.counts.allocations >= 32)
            #expect(run.counts.frees >= 32)
            #expect(run.lastCalls.allocations == "malloc", "the array's buffer: swift_allocObject's malloc")
            #expect(run.lastCalls.frees == "free")
        case .readClock:
            #expect(run.counts.syscalls >= 32)
            #expect(run.lastCall == "clock_gettime")
            #expect(run.lastCalls.syscalls == "clock_gettime")
        case .write:
            #expect(run.counts.syscalls >= 32)
            #expect(run.lastCall == "write")
            #expect(run.lastCalls.syscalls == "write")
        case .sleep:
            #expect(run.counts.syscalls >= 32)
            #expect(run.voluntarySwitches >= 32, "every sleep gives up the CPU")
            #expect(run.lastCall == "usleep")
            #expect(run.lastCalls.syscalls == "usleep")
        case .waitOnContendedMutex:
            #expect(run.counts.syscalls >= 1, "the futex wait goes through syscall()")
            #expect(run.voluntarySwitches >= 1, "the waiting thread gives up the CPU")
            #expect(run.lastCalls.syscalls == "syscall", "the futex wait of Synchronization.Mutex's slow path")
        case .pthreadLock:
            #expect(run.counts.locks >= 32, "one pthread_mutex_lock per callback that pulled the source")
            #expect(run.lastCall == "pthread_mutex_lock")
            #expect(run.lastCalls.locks == "pthread_mutex_lock")
        case .bufferedWrite:
            #expect(run.counts.syscalls >= 32, "one fputs per callback, though the FILE's buffer takes it")
            #expect(run.lastCall == "fputs")
            #expect(run.lastCalls.syscalls == "fputs")
            #expect(run.counts.allocations == 0 && run.counts.locks == 0, "fputs is the only call the source makes")
        }
    }

    @Test("the probe catches an allocation (positive control)")
    func probeCatchesAllocation() throws {
        try Probe.require()
        CRealtimeProbe_reset()
        CRealtimeProbe_armCurrentThread()
        let array = [Int](repeating: 7, count: Int.random(in: 100...200))
        CRealtimeProbe_disarmCurrentThread()
        #expect(array.count >= 100)
        #expect(CRealtimeProbe_read().allocations >= 1)
    }

    @Test("the probe counts every acquisition of the package's Locked, uncontended ones included (positive control)")
    func probeCatchesLocked() throws {
        try Probe.require()
        let locked = Locked(0)
        // Warm-up first: the first call instantiates generic metadata, and the runtime's metadata
        // cache may wait on its own futex while other tests' threads fill it (once seen: 1 syscall).
        locked.withLock { $0 += 1 }
        CRealtimeProbe_reset()
        CRealtimeProbe_armCurrentThread()
        for _ in 0..<5 { locked.withLock { $0 += 1 } }
        CRealtimeProbe_disarmCurrentThread()
        let counts = CRealtimeProbe_read()
        let culprit = String(cString: CRealtimeProbe_lastCall())
        #expect(counts.locks == 5, "last counted call: \(culprit)")
        #expect(counts.syscalls == 0, "an uncontended Mutex makes no call, only the hook sees it; last: \(culprit)")
        #expect(locked.withLock { $0 } == 6)
    }

    @Test("the probe counts clock_gettime, read, write and nanosleep as system calls (positive control)")
    func probeCatchesSystemCalls() throws {
        try Probe.require()
        let descriptor = open("/dev/zero", O_RDWR)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var byte: UInt8 = 0
        var time = timespec()
        var pause = timespec(tv_sec: 0, tv_nsec: 1000)
        let calls: [(String, () -> Void)] = [
            ("clock_gettime", { clock_gettime(CLOCK_MONOTONIC, &time) }),
            ("read", { _ = read(descriptor, &byte, 1) }),
            ("write", { _ = write(descriptor, &byte, 1) }),
            ("nanosleep", { nanosleep(&pause, nil) }),
            ("syscall", { _ = CRealtimeProbe_rawSyscall() }),
        ]
        for (name, call) in calls {
            CRealtimeProbe_reset()
            CRealtimeProbe_armCurrentThread()
            call()
            CRealtimeProbe_disarmCurrentThread()
            #expect(
                CRealtimeProbe_read().syscalls == 1,
                "\(name); last counted: \(String(cString: CRealtimeProbe_lastCall()))")
            #expect(String(cString: CRealtimeProbe_lastCall()) == name)
        }
    }

    @Test("a thread that is neither armed nor watched is not counted")
    func unarmedThreadsAreNotCounted() throws {
        try Probe.require()
        CRealtimeProbe_reset()
        let locked = Locked(0)
        locked.withLock { $0 += 1 }
        free(strdup("not counted"))
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        let counts = CRealtimeProbe_read()
        #expect(counts.allocations == 0 && counts.locks == 0 && counts.syscalls == 0)
    }
}

/// One forbidden thing a broken kernel could do inside `render(into:frames:)`.
enum Fault: String, CaseIterable, Sendable, CustomStringConvertible {
    case lockLocked = "takes the package's Locked"
    case allocate = "allocates an array"
    case readClock = "reads ContinuousClock.now (clock_gettime)"
    case write = "writes to /dev/null"
    case sleep = "sleeps 50 µs"
    case waitOnContendedMutex = "waits on a Synchronization.Mutex another thread holds"
    case pthreadLock = "takes an uncontended pthread mutex"
    case bufferedWrite = "writes a line to a fully buffered FILE (fputs, no write(2))"

    var description: String { rawValue }
}

/// A source that renders a 1 kHz tone at 0.5 and then does its ``Fault``: the kernel with a bug in it.
final class MisbehavingSource: AudioSource {
    let fault: Fault
    private let tone: SineSource
    private let locked = Locked(0)
    private let sink = Atomic<Int>(0)
    private let devNull: Int32
    private let contended = ContendedMutex()
    private let callbacks = Atomic<Int>(0)
    private let pthreadMutex = PthreadMutexBox()
    private let bufferedFile = BufferedNullFile()

    init(_ fault: Fault) throws {
        self.fault = fault
        tone = try SineSource(frequency: 1000, amplitude: 0.5)
        devNull = open("/dev/null", O_WRONLY)
    }

    deinit { close(devNull) }

    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let rendered = tone.render(into: buffer, frames: frames)
        let callback = callbacks.add(1, ordering: .relaxed).newValue
        switch fault {
        case .lockLocked:
            locked.withLock { $0 += frames }
        case .allocate:
            let array = [Int](repeating: callback, count: frames)
            sink.store(array[frames / 2], ordering: .relaxed)
        case .readClock:
            let now = ContinuousClock.now
            sink.store(Int(now.hashValue & 0xff), ordering: .relaxed)
        case .write:
            var byte = UInt8(truncatingIfNeeded: callback)
            sink.store(write(devNull, &byte, 1), ordering: .relaxed)
        case .sleep:
            usleep(50)
        case .pthreadLock:
            pthread_mutex_lock(pthreadMutex.raw)
            sink.store(callback, ordering: .relaxed)
            pthread_mutex_unlock(pthreadMutex.raw)
        case .bufferedWrite:
            if let file = bufferedFile.file { fputs(bufferedFile.line, file) }
        case .waitOnContendedMutex:
            // Once (the first counted callback, after the warm-up): a holder thread takes the Mutex for
            // 20 ms and this waits for it.
            if callback == 2 { waitForHeldMutex() }
        }
        return rendered
    }

    private func waitForHeldMutex() {
        CRealtimeProbe_disarmCurrentThread()  // setting the scene is not the fault
        let holder = HolderThread(contended)
        while !contended.ready.load(ordering: .acquiring) { sched_yield() }
        CRealtimeProbe_armCurrentThread()
        contended.mutex.withLock { $0 += 1 }
        CRealtimeProbe_disarmCurrentThread()
        holder.join()
        CRealtimeProbe_armCurrentThread()
    }
}

/// A pthread mutex of its own (a test's, not the package's `Locked`).
private final class PthreadMutexBox: @unchecked Sendable {
    // @unchecked: `raw` never changes after init, and a pthread mutex is made to be shared.
    let raw: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        raw = .allocate(capacity: 1)
        pthread_mutex_init(raw, nil)
    }

    deinit {
        pthread_mutex_destroy(raw)
        raw.deallocate()
    }
}

/// /dev/null opened as a FILE with a 64 KiB buffer: lines written to it stay in the buffer, so the
/// kernel never sees them (no write(2)) until it fills.
private final class BufferedNullFile: @unchecked Sendable {
    // @unchecked: `file` and `line` never change after init; stdio locks each FILE for its callers.
    let file: UnsafeMutablePointer<FILE>?
    /// The line written, as a C string made once (a Swift string would be converted at each call).
    let line: UnsafeMutablePointer<CChar>

    init() {
        file = fopen("/dev/null", "w")
        if let file { setvbuf(file, nil, _IOFBF, 1 << 16) }
        line = strdup("a log line from the render path\n")
    }

    deinit {
        if let file { fclose(file) }
        free(line)
    }
}

/// A Mutex one thread holds while another waits for it.
private final class ContendedMutex: Sendable {
    let mutex = Mutex(0)
    let ready = Atomic<Bool>(false)
}

/// A thread that holds a ``ContendedMutex`` for 20 ms.
private final class HolderThread: @unchecked Sendable {
    // @unchecked: `handle` is written once in init before join() reads it; `contended` is Sendable.
    private var handle = pthread_t()
    private let contended: ContendedMutex

    init(_ contended: ContendedMutex) {
        self.contended = contended
        let retained = Unmanaged.passRetained(self)
        pthread_create(
            &handle, nil,
            { raw in
                let thread = Unmanaged<HolderThread>.fromOpaque(raw!).takeRetainedValue()
                thread.contended.mutex.withLock { _ in
                    thread.contended.ready.store(true, ordering: .releasing)
                    usleep(20_000)
                }
                return nil
            }, retained.toOpaque())
    }

    func join() { pthread_join(handle, nil) }
}

/// Renders `sources` through `StreamRenderer`s as a real-time thread would, with the probe armed only
/// around each render call: 6 rounds of 8 callbacks per stream at quanta of 256 to 8192 frames, with
/// gain ramps, a paused round and a suspended round set between callbacks, as a control thread would.
/// Measures what each callback rendered.
struct KernelRun {
    var counts = CRealtimeProbe_Counts()
    var lastCall = ""
    /// The last call counted of each kind.
    var lastCalls = LastCalls()
    var voluntarySwitches: Int64 = 0
    var callbacks = 0
    /// Callbacks whose output's RMS was above −40 dBFS.
    var audibleCallbacks = 0
    /// Callbacks whose output was digital silence.
    var silentCallbacks = 0
    /// The lowest RMS of a callback expected to be heard.
    var quietest = 0.0

    static let quanta = [256, 1024, 4096, 8192, 1024, 333]

    init(sources: [any AudioSource]) throws {
        _ = Probe.hookInstalled
        let renderers = sources.map { StreamRenderer(source: $0, gain: 1, paused: false) }
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 8192 * 2)
        defer { output.deallocate() }
        // Warm-up on this thread first, as the real-time notes require (generic metadata, lazy globals).
        for renderer in renderers { renderer.render(into: output, frames: 1024, accumulate: false, suspended: false) }
        CRealtimeProbe_reset()
        for (round, frames) in Self.quanta.enumerated() {
            for renderer in renderers {
                renderer.setGain(round % 2 == 0 ? 0.1 : 1, rampFrames: 7200)
                renderer.setPaused(round == 3)
                for index in 0..<8 {
                    output.update(repeating: 0, count: frames * 2)
                    let switches = CRealtimeProbe_voluntarySwitches()
                    CRealtimeProbe_armCurrentThread()
                    renderer.render(into: output, frames: frames, accumulate: true, suspended: round == 4)
                    CRealtimeProbe_disarmCurrentThread()
                    voluntarySwitches += CRealtimeProbe_voluntarySwitches() - switches
                    callbacks += 1
                    let samples = Array(UnsafeBufferPointer(start: output, count: frames * 2))
                    let level = try meter.rms(samples)
                    if level > -40 { audibleCallbacks += 1 }
                    if try meter.isSilent(samples) && index > 0 { silentCallbacks += 1 }
                    if round != 3 && round != 4 { quietest = min(quietest, level) }
                }
            }
        }
        counts = CRealtimeProbe_read()
        lastCall = String(cString: CRealtimeProbe_lastCall())
        lastCalls = LastCalls()
    }

    /// No allocation, free, lock or system call, and no wait.
    var isClean: Bool {
        counts.allocations == 0 && counts.frees == 0 && counts.locks == 0 && counts.syscalls == 0
            && voluntarySwitches == 0
    }

    var summary: String {
        "\(callbacks) callbacks (\(audibleCallbacks) heard, \(silentCallbacks) silent), \(counts.allocations) allocations, "
            + "\(counts.frees) frees, \(counts.locks) locks, \(counts.syscalls) system calls, "
            + "\(voluntarySwitches) voluntary context switches; last counted call: \(lastCall.isEmpty ? "none" : lastCall)"
    }
}

/// The last call the probe counted on this thread of each kind (CRealtimeProbe_lastCalls), as strings.
struct LastCalls: Sendable, Equatable {
    var allocations = "", frees = "", locks = "", syscalls = ""

    /// Reads them from the probe.
    init() {
        let calls = CRealtimeProbe_lastCalls()
        allocations = String(cString: calls.allocations)
        frees = String(cString: calls.frees)
        locks = String(cString: calls.locks)
        syscalls = String(cString: calls.syscalls)
    }
}
