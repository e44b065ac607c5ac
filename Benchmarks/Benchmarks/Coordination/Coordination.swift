import Benchmark
import CHeap
import Dispatch
import SharedSession
import Synchronization

/// A session over the offline engine with the main stream open and `held` generic leases held by
/// other owners, made once per process and kept (making 10,000 leases takes a while).
final class Fixture: Sendable {
    let session: SharedSession
    let main: StreamHandle
    let held: [SessionLease]

    init(held count: Int) {
        let session = SharedSession(engine: OfflineEngine())
        self.session = session
        // swiftlint:disable:next force_try
        main = try! session.openMainStream(source: SineSource(frequency: 440, amplitude: 0.5))
        held = (0..<count).map { index in
            // swiftlint:disable:next force_try
            try! session.acquire(.generic, owner: "holder \(index)")
        }
    }

    private static let cache = Mutex<[Int: Fixture]>([:])

    static func holding(_ count: Int) -> Fixture {
        if let fixture = cache.withLock({ $0[count] }) { return fixture }
        let fixture = Fixture(held: count)
        cache.withLock { $0[count] = fixture }
        return fixture
    }
}

/// Runs `body(i)` for i in 0..<count, split over two threads at once.
func onTwoThreads(_ count: Int, _ body: @Sendable (Int) -> Void) {
    DispatchQueue.concurrentPerform(iterations: 2) { thread in
        var index = thread
        while index < count {
            body(index)
            index += 2
        }
    }
}

/// Heap bytes in use now (glibc's arena accounting).
func heapInUse() -> Int {
    Int(cheap_in_use())
}

let pairMetrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .throughput, .mallocCountTotal]

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: pairMetrics, timeUnits: .nanoseconds, warmupIterations: 3,
        maxDuration: .seconds(2), maxIterations: 1_000)

    // MARK: Coordination cost: one thread

    // 1,000 pairs per sample at every size: a sample of one pair would measure the harness's own
    // start and stop (about 16 allocations and a microsecond) more than the pair.
    for held in [1, 100, 10_000] {
        let scale: BenchmarkScalingFactor = .kilo
        Benchmark("acquire+release, \(held) held", configuration: .init(scalingFactor: scale)) { benchmark in
            let fixture = Fixture.holding(held)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                // swiftlint:disable:next force_try
                let lease = try! fixture.session.acquire(.generic, owner: "bench")
                lease.release()
            }
        }
        Benchmark("duck+release, \(held) held", configuration: .init(scalingFactor: scale)) { benchmark in
            let fixture = Fixture.holding(held)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                fixture.session.duck(owner: "bench").release()
            }
        }
    }

    // MARK: Coordination cost: contended on two threads

    for held in [1, 100] {
        Benchmark("acquire+release on 2 threads, \(held) held", configuration: .init(scalingFactor: .kilo)) {
            benchmark in
            let fixture = Fixture.holding(held)
            benchmark.startMeasurement()
            onTwoThreads(benchmark.scaledIterations.count) { _ in
                // swiftlint:disable:next force_try
                let lease = try! fixture.session.acquire(.generic, owner: "bench")
                lease.release()
            }
        }
        Benchmark("duck+release on 2 threads, \(held) held", configuration: .init(scalingFactor: .kilo)) {
            benchmark in
            let fixture = Fixture.holding(held)
            benchmark.startMeasurement()
            onTwoThreads(benchmark.scaledIterations.count) { _ in
                fixture.session.duck(owner: "bench").release()
            }
        }
    }

    // MARK: The baseline: StreamLayer's lock and counters

    Benchmark("baseline acquire+release", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let host = StreamLayerBaseline()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            host.prepareAudioSession(for: .generic)
            host.disableAudioSession(for: .generic)
        }
        blackHole(host.playerVolume)
    }
    Benchmark("baseline duck+release", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let host = StreamLayerBaseline()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            host.requestAudioDucking()
            host.disableAudioDucking()
        }
        blackHole(host.playerVolume)
    }
    Benchmark("baseline acquire+release on 2 threads", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let host = StreamLayerBaseline()
        benchmark.startMeasurement()
        onTwoThreads(benchmark.scaledIterations.count) { _ in
            host.prepareAudioSession(for: .generic)
            host.disableAudioSession(for: .generic)
        }
    }
    Benchmark("baseline duck+release on 2 threads", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let host = StreamLayerBaseline()
        benchmark.startMeasurement()
        onTwoThreads(benchmark.scaledIterations.count) { _ in
            host.requestAudioDucking()
            host.disableAudioDucking()
        }
    }

    // MARK: Memory per open stream and per held lease

    let memory: [BenchmarkMetric] = [.custom("heap bytes each", polarity: .prefersSmaller, useScalingFactor: false)]
    Benchmark("memory per held lease", configuration: .init(metrics: memory, maxIterations: 5)) { benchmark in
        let session = SharedSession(engine: OfflineEngine())
        let before = heapInUse()
        // swiftlint:disable:next force_try
        let leases = (0..<1_000).map { _ in try! session.acquire(.generic, owner: "holder") }
        benchmark.measurement(.custom("heap bytes each"), (heapInUse() - before) / leases.count)
        for lease in leases { lease.release() }
    }
    Benchmark("memory per open stream", configuration: .init(metrics: memory, maxIterations: 5)) { benchmark in
        let session = SharedSession(engine: OfflineEngine())
        let before = heapInUse()
        let streams = (0..<200).map { index in
            // swiftlint:disable:next force_try
            try! session.openStream(
                StreamDescriptor(name: "overlay \(index)", role: .game),
                source: SineSource(frequency: 440, amplitude: 0.1))
        }
        benchmark.measurement(.custom("heap bytes each"), (heapInUse() - before) / streams.count)
        for stream in streams { stream.close() }
    }

    // MARK: Render path: one graph cycle of N streams (each renders one quantum, gains ramping)

    let render: [BenchmarkMetric] = [.wallClock, .mallocCountTotal]
    for quantum in [256, 1024, 4096] {
        for streams in [1, 8, 32, 64] {
            Benchmark(
                "render cycle, \(streams) streams, quantum \(quantum)",
                configuration: .init(metrics: render, warmupIterations: 10, maxDuration: .milliseconds(500))
            ) { benchmark in
                let renderers = (0..<streams).map { index in
                    StreamRenderer(
                        // swiftlint:disable:next force_try
                        source: try! SineSource(frequency: 200 + Double(index), amplitude: 0.1), gain: 1,
                        paused: false)
                }
                // Ramps run for the whole measurement.
                for renderer in renderers { renderer.setGain(0.1, rampFrames: 48_000 * 10) }
                measureCycle(benchmark, renderers: renderers, quantum: quantum)
            }
        }
    }

    // Steady playback: no ramp running, the case of almost every cycle.
    for quantum in [256, 1024] {
        Benchmark(
            "render cycle steady, 32 streams, quantum \(quantum)",
            configuration: .init(metrics: render, warmupIterations: 10, maxDuration: .milliseconds(500))
        ) { benchmark in
            let renderers = (0..<32).map { index in
                StreamRenderer(
                    // swiftlint:disable:next force_try
                    source: try! SineSource(frequency: 200 + Double(index), amplitude: 0.1), gain: 0.5, paused: false)
            }
            measureCycle(benchmark, renderers: renderers, quantum: quantum)
        }
    }

    // MARK: Ducks in the render path: the far end's stream and the movie it ducks, one cycle

    // The same pair (a voice and the movie) under each duck style, settled: a fixed duck (the movie's
    // gain at 0.1), a voice-activity duck (the movie follows the voice's activity meter), and a
    // loudness duck (the voice's meter also K-weights it; the movie K-weights its own source and sets
    // the depth each 100 ms).
    for quantum in [256, 1024, 4096] {
        for style in DuckCycle.allCases {
            Benchmark(
                "duck cycle, \(style), quantum \(quantum)",
                configuration: .init(metrics: render, warmupIterations: 10, maxDuration: .milliseconds(500))
            ) { benchmark in
                measureCycle(benchmark, renderers: style.pair(), quantum: quantum)
            }
        }
    }

    // MARK: Offline render speed: a 14 s watch-party-like scene

    Benchmark(
        "offline scene 14 s",
        configuration: .init(metrics: [.wallClock, .cpuTotal], timeUnits: .milliseconds, maxIterations: 10)
    ) { benchmark in
        // swiftlint:disable force_try
        let engine = OfflineEngine(input: try! SineSource(frequency: 300, amplitude: 0.3))
        let session = SharedSession(engine: engine)
        let host = try! session.acquire(.generic, owner: "player")
        let movie = try! session.openMainStream(source: SineSource(frequency: 440, amplitude: 0.5))
        func play(_ seconds: Double) { _ = try! engine.render(duration: .milliseconds(Int(seconds * 1000))) }
        play(2)
        let clip = try! session.openStream(
            StreamDescriptor(name: "feed clip", role: .movie), source: SineSource(frequency: 660, amplitude: 0.4),
            owner: "social-feed")
        let clipDuck = session.duck(owner: "social-feed")
        play(3)
        clipDuck.release()
        clip.close()
        play(1)
        let voice = try! session.acquire(.voice, owner: "watch-party")
        let callDuck = session.duck(owner: "watch-party")
        let capture = try! AudioRingBuffer(minimumCapacity: 48_000)
        try! engine.startCapture(into: capture)
        let farEnd = try! session.openStream(
            StreamDescriptor(name: "far end", role: .communication),
            source: SineSource(frequency: 550, amplitude: 0.3), owner: "watch-party")
        for _ in 0..<8 {
            play(0.5)
            _ = capture.readAll()
        }
        let note = try! session.openStream(
            StreamDescriptor(name: "notification", role: .notification),
            source: SineSource(frequency: 880, amplitude: 0.2), owner: "messages")
        play(0.5)
        note.close()
        farEnd.close()
        engine.stopCapture()
        callDuck.release()
        voice.release()
        play(3.5)
        movie.close()
        host.release()
        session.close()
        // swiftlint:enable force_try
    }
}

/// Renders one quantum of every renderer once unmeasured (so each has picked up its gain), then
/// measures one graph cycle: every renderer rendering one quantum in turn, as the data thread does.
func measureCycle(_ benchmark: Benchmark, renderers: [StreamRenderer], quantum: Int) {
    let output = UnsafeMutablePointer<Float>.allocate(capacity: quantum * 2)
    defer { output.deallocate() }
    for renderer in renderers {
        renderer.render(into: output, frames: quantum, accumulate: false, suspended: false)
    }
    benchmark.startMeasurement()
    for renderer in renderers {
        renderer.render(into: output, frames: quantum, accumulate: false, suspended: false)
    }
    benchmark.stopMeasurement()
    blackHole(output[0])
}

/// A duck style whose cost in the render path is measured: the far end's voice and the movie.
enum DuckCycle: String, CaseIterable, CustomStringConvertible {
    case fixed = "fixed duck"
    case voiceActivity = "voice-activity duck"
    case loudness = "loudness duck"

    var description: String { rawValue }

    /// The voice (rendered first, as the engines render followed streams first) and the movie.
    func pair() -> [StreamRenderer] {
        // swiftlint:disable force_try
        let voice = StreamRenderer(source: try! SineSource(frequency: 300, amplitude: 0.3), gain: 1, paused: false)
        let movie = StreamRenderer(source: try! SineSource(frequency: 440, amplitude: 0.5), gain: 1, paused: false)
        // swiftlint:enable force_try
        let meter = voice.activityMeter()!
        meter.configure(threshold: VoiceActivityPolicy.default.linearThreshold, holdFrames: 57_600)
        switch self {
        case .fixed:
            movie.setGain(0.1, rampFrames: 0)
        case .voiceActivity:
            movie.setActivityDuck(gain: 0.1, following: [meter], attack: .milliseconds(20), release: .milliseconds(400))
        case .loudness:
            meter.measureLoudness()
            movie.setActivityDuck(
                gain: 1, following: [meter],
                loudness: LoudnessFollowing(slots: [LoudnessSlot(margin: 10, deepest: -30)], policy: .default),
                attack: .milliseconds(20), release: .milliseconds(400))
        }
        return [voice, movie]
    }
}
