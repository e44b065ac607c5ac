import CRealtimeProbe
import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import Testing

/// Tests that need a running PipeWire daemon: they share it, so they run one at a time.
@Suite(
    "PipeWire daemon", .serialized,
    .enabled("needs a PipeWire daemon (Scripts/pipewire-headless start)") { Daemon.isAvailable })
struct DaemonTests {}

let mainID = StreamID(rawValue: 1)
let overlayID = StreamID(rawValue: 2)
let mainTone = 1000.0  // 10 cycles in a 10 ms window: levels of two tones never leak into each other
let overlayTone = 3000.0
let mainLevel = Signal.decibels(0.5)  // -6.02 dBFS for a 0.5 sine
let overlayLevel = Signal.decibels(0.25)

/// An engine under test with its event log, and a recorder of the sink it plays to.
final class EngineRig {
    let engine: PipeWireEngine
    let events = EngineEventLog()
    let recorder: SinkRecorder
    /// The controls of the streams opened by ``openMain(gain:paused:)`` and ``openOverlay()``.
    private(set) var main: (any StreamControl)?
    private(set) var overlay: (any StreamControl)?

    init() throws {
        try Daemon.ensureRunning()
        engine = try PipeWireEngine(applicationName: "SharedSession tests")
        engine.setEventHandler { [events] in events.append($0) }
        recorder = try SinkRecorder()
    }

    func openMain(gain: Float = 1, paused: Bool = false) throws {
        main = try engine.openStream(
            mainID, descriptor: StreamDescriptor(name: "main", role: .movie),
            source: SineSource(frequency: mainTone, amplitude: 0.5), gain: gain, paused: paused)
    }

    func openOverlay() throws {
        overlay = try engine.openStream(
            overlayID, descriptor: StreamDescriptor(name: "overlay", role: .music),
            source: SineSource(frequency: overlayTone, amplitude: 0.25), gain: 1, paused: false)
    }

    func stop() {
        recorder.stop()
        engine.shutdown()
    }

    /// Plays the main stream until the recording hears it and returns the default sink it plays to,
    /// for the tests that then move or remove that sink.
    func playMainOnDefaultSink() async throws -> String {
        try openMain()
        try await recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
        return try #require(engine.defaultSink)
    }
}

extension DaemonTests {
    @Suite("PipeWireEngine against the daemon")
    struct EngineTests {
        @Test("without a daemon, connecting throws engineUnavailable saying how to start one")
        func noDaemonThrowsEngineUnavailable() throws {
            let error = #expect(throws: SessionError.self) {
                _ = try PipeWireEngine(remoteName: "sharedsession-no-such-daemon")
            }
            #expect(error?.code == .engineUnavailable)
            #expect(error?.message.contains("Scripts/pipewire-headless start") == true)
        }

        @Test("daemon: after shutdown every method is safe: opening throws engineUnavailable, the rest do nothing")
        func shutdownIsFinal() throws {
            try Daemon.ensureRunning()
            let engine = try PipeWireEngine()
            let main = try engine.openStream(
                mainID, descriptor: StreamDescriptor(name: "main", role: .movie),
                source: SineSource(frequency: mainTone, amplitude: 0.5), gain: 1, paused: false)
            #expect(engine.isConnected)
            engine.shutdown()
            engine.shutdown()
            #expect(!engine.isConnected)
            main.setGain(0.5, ramp: .milliseconds(10))
            main.setPaused(true)
            engine.setSuspended(true)
            engine.closeStream(mainID)
            engine.stopCapture()
            let error = #expect(throws: SessionError.self) {
                try engine.openStream(
                    overlayID, descriptor: StreamDescriptor(name: "late", role: .music),
                    source: SineSource(frequency: overlayTone, amplitude: 0.25), gain: 1, paused: false)
            }
            #expect(error?.code == .engineUnavailable)
            #expect(throws: SessionError.self) { try engine.startCapture(into: AudioRingBuffer(minimumCapacity: 64)) }
        }

        @Test("daemon: a stream naming an unknown target sink is refused with unknownTarget and the sinks there are")
        func unknownTargetIsRefused() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            let error = #expect(throws: SessionError.self) {
                try rig.engine.openStream(
                    mainID, descriptor: StreamDescriptor(name: "main", role: .movie, target: "no-such-sink"),
                    source: SineSource(frequency: mainTone, amplitude: 0.5), gain: 1, paused: false)
            }
            #expect(error?.code == .unknownTarget)
            #expect(error?.message.contains("no-such-sink") == true)
            let sink = try #require(rig.engine.defaultSink)
            #expect(error?.message.contains(sink) == true)
            // Naming a sink that exists plays on it.
            _ = try rig.engine.openStream(
                mainID, descriptor: StreamDescriptor(name: "main", role: .movie, target: sink),
                source: SineSource(frequency: mainTone, amplitude: 0.5), gain: 1, paused: false)
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
        }

        @Test("daemon: the main stream plays at its level on the null sink, on a real-time data thread")
        func mainStreamPlays() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            let start = try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(300))
            let samples = rig.recorder.samples
            let level = Signal.level(samples, frequency: mainTone, from: start + 480, frames: 9600)
            let rms = Signal.rms(samples, from: start + 480, frames: 9600)
            print(
                "[measure] main stream: tone \(level) dBFS, RMS \(rms) dBFS; quantum \(rig.engine.quantum); realtime \(rig.engine.isRealtime)"
            )
            #expect(abs(level - mainLevel) < 0.1)
            #expect(abs(rms - Signal.decibels(0.5 / 2.squareRoot())) < 0.1)
            #expect(rig.engine.quantum > 0)
            #expect(rig.engine.isRealtime, "the data thread did not get SCHED_FIFO/RR (client-rt.conf, module-rt)")
            let own = Daemon.ownNodeNames()
            #expect(own.contains { $0.hasSuffix(".\(mainID.rawValue)") })
        }

        @Test(
            "daemon: a duck ramps the main stream down 20 dB within the fade plus two quanta and back, the overlay untouched"
        )
        func duckAndRestore() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            try rig.openOverlay()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.waitForTone(overlayTone, atLeast: overlayLevel - 1)
            try await rig.recorder.record(for: .milliseconds(200))
            let fade = Duration.milliseconds(150)
            let duckMark = rig.recorder.mark()
            rig.main?.setGain(0.1, ramp: fade)
            try await rig.recorder.record(for: .milliseconds(600))
            let restoreMark = rig.recorder.mark()
            rig.main?.setGain(1, ramp: fade)
            try await rig.recorder.record(for: .milliseconds(600))
            let samples = rig.recorder.samples
            let end = samples.count / 2

            let before = Signal.level(samples, frequency: mainTone, from: duckMark - 4800, frames: 4800)
            let ducked = Signal.level(samples, frequency: mainTone, from: restoreMark - 4800, frames: 4800)
            let restored = Signal.level(samples, frequency: mainTone, from: end - 4800, frames: 4800)
            let reached = try #require(
                Signal.firstFrame(
                    samples, frequency: mainTone, atOrBelow: before - 19, from: duckMark, until: restoreMark))
            let latency = milliseconds(reached - duckMark)
            let quantum = Double(rig.engine.quantum) / 48
            print(
                "[measure] engine duck: before \(before) dB, ducked \(ducked - before) dB, restored \(restored - before) dB, request to -19 dB \(latency) ms (fade 150 ms, quantum \(quantum) ms)"
            )
            #expect(abs(ducked - before + 20) <= 1)
            #expect(abs(restored - before) <= 0.5)
            #expect(latency <= 150 + 2 * quantum + 10, "10 ms is the analysis window")
            var overlayLevels: [Double] = []
            var frame = duckMark - 4800
            while frame + 4800 <= end {
                overlayLevels.append(Signal.level(samples, frequency: overlayTone, from: frame, frames: 4800))
                frame += 2400
            }
            #expect(overlayLevels.allSatisfy { abs($0 - overlayLevel) < 0.5 }, "overlay levels \(overlayLevels)")
        }

        @Test("daemon: suspending silences every stream and resuming brings them back")
        func suspendSilences() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            try rig.openOverlay()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            rig.engine.setSuspended(true)
            let rms = try await rig.recorder.level(after: .milliseconds(300), over: .milliseconds(200))
            #expect(rms < -90, "RMS while suspended \(rms) dBFS")
            rig.engine.setSuspended(false)
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 0.5, timeout: .seconds(1))
            try await rig.recorder.waitForTone(overlayTone, atLeast: overlayLevel - 0.5, timeout: .seconds(1))
        }

        @Test(
            "daemon: the quantum forced from 1024 to 4096 and back plays on with no gap", .privateDaemonOnly
        )
        func quantumChangeHasNoGap() async throws {
            let rig = try EngineRig()
            defer {
                Daemon.forceQuantum(0)
                rig.stop()
            }
            try rig.openMain()
            let start = try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(300))
            let initial = rig.engine.quantum
            Daemon.forceQuantum(4096)
            try await rig.recorder.record(for: .milliseconds(800))
            let forced = rig.engine.quantum
            Daemon.forceQuantum(0)
            try await rig.recorder.record(for: .milliseconds(800))
            let after = rig.engine.quantum
            let samples = rig.recorder.samples
            let end = samples.count / 2 - 480
            let step = Signal.largestStep(samples, from: start + 480, until: end)
            var lowest = 0.0
            var frame = start + 480
            while frame + 480 <= end {
                lowest = min(lowest, Signal.level(samples, frequency: mainTone, from: frame, frames: 480) - mainLevel)
                frame += 240
            }
            let quanta = rig.events.all.compactMap { event -> Int? in
                if case .quantumChanged(let frames) = event { return frames } else { return nil }
            }
            print(
                "[measure] quantum \(initial) -> \(forced) -> \(after); events \(quanta); largest step \(step); lowest 10 ms window \(lowest) dB"
            )
            #expect(forced == 4096)
            #expect(after == initial)
            #expect(quanta.contains(4096))
            #expect(step < 0.07, "a 1 kHz 0.5 tone never steps more than 0.066")
            #expect(lowest > -0.5)
            #expect(!rig.events.all.contains { if case .streamFault = $0 { true } else { false } })
        }

        @Test("daemon: another process's playback raises otherAudioStarted, and its end otherAudioStopped")
        func otherClientPlayback() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            #expect(
                !rig.events.all.contains(.system(.otherAudioStarted)), "the engine's own streams are not other audio")
            let tone = try Daemon.writeTone(frequency: 500, amplitude: 0.1, seconds: 0.4)
            let player = try Daemon.launch("pw-play", [tone.path])
            let started = try await rig.events.wait { $0 == .system(.otherAudioStarted) }
            #expect(started != nil)
            player.waitUntilExit()
            let stopped = try await rig.events.wait { $0 == .system(.otherAudioStopped) }
            #expect(stopped != nil)
        }

        @Test(
            "daemon: a volume set on a stream just after it connects (a session manager's restore) is undone, not reported"
        )
        func restoredVolumeIsUndone() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            var node: Int?
            let end = ContinuousClock.now + .milliseconds(500)
            while node == nil, ContinuousClock.now < end {
                node = Daemon.ownNodeNames().first { $0.hasSuffix(".\(mainID.rawValue)") }.flatMap(
                    Daemon.nodeID(named:))
            }
            let id = try #require(node)
            // What WirePlumber's restore-props does with a saved, ducked volume: 0.1 on a fresh stream.
            Daemon.run("pw-cli", ["set-param", "\(id)", "Props", "{ channelVolumes: [ 0.1, 0.1 ] }"])
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(300))
            #expect(abs(rig.recorder.mainLevelNow() - mainLevel) < 0.2)
            #expect(!rig.events.all.contains { if case .externalVolumeChange = $0 { true } else { false } })
        }

        @Test("daemon: a volume set on our stream from outside is reported and PipeWire's volume goes back to 1")
        func externalVolume() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await Task.sleep(for: .seconds(1))  // past the window where a restore is undone silently
            let name = try #require(Daemon.ownNodeNames().first { $0.hasSuffix(".\(mainID.rawValue)") })
            let node = try #require(Daemon.nodeID(named: name))
            let result = Daemon.run("wpctl", ["set-volume", "\(node)", "0.5"])
            #expect(result.status == 0, "\(result.output)")
            let event = try await rig.events.wait {
                if case .externalVolumeChange(mainID, _) = $0 { true } else { false }
            }
            guard case .externalVolumeChange(_, let volume) = event else {
                Issue.record("no externalVolumeChange; events \(rig.events.all)")
                return
            }
            print("[measure] wpctl set-volume 0.5 reported as channel volume \(volume)")
            #expect(abs(volume - 0.125) < 0.01, "wpctl's 0.5 is cubic: 0.125 linear")
            // PipeWire's own volume is back at 1: the level in the recording is the renderer's alone.
            try await rig.recorder.record(for: .milliseconds(300))
            let mark = rig.recorder.mark()
            let level = Signal.level(rig.recorder.samples, frequency: mainTone, from: mark - 4800, frames: 4800)
            #expect(abs(level - mainLevel) < 0.2, "level \(level)")
        }

        @Test(
            "daemon: the default sink changing is a routeConfigurationChange and the streams follow it",
            .privateDaemonOnly
        )
        func defaultSinkChange() async throws {
            let rig = try EngineRig()
            defer {
                Daemon.setDefaultSink(nil)
                rig.stop()
            }
            let original = try await rig.playMainOnDefaultSink()
            let other = "sharedsession-voice-in"
            Daemon.setDefaultSink(other)
            let event = try await rig.events.wait {
                if case .system(.routeChanged) = $0 { true } else { false }
            }
            #expect(
                event
                    == .system(
                        .routeChanged(
                            RouteChange(
                                reason: .routeConfigurationChange, previousOutput: original, currentOutput: other))))
            Daemon.setDefaultSink(original)
            let back = try await rig.events.wait {
                $0
                    == .system(
                        .routeChanged(
                            RouteChange(
                                reason: .routeConfigurationChange, previousOutput: other, currentOutput: original)))
            }
            #expect(back != nil)
        }

        @Test(
            "daemon: voice capture receives what is played into the default source", .privateDaemonOnly
        )
        func voiceCapture() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            let ring = try AudioRingBuffer(minimumCapacity: 1 << 18)
            try rig.engine.startCapture(into: ring)
            let tone = try Daemon.writeTone(frequency: 750, amplitude: 0.5, seconds: 0.6)
            let player = try Daemon.launch("pw-play", ["--target", "sharedsession-voice-in", tone.path])
            player.waitUntilExit()
            let captured = ring.readAll()
            rig.engine.stopCapture()
            let frames = captured.count / 2
            var best = -200.0
            var frame = 0
            while frame + 4800 <= frames {
                best = max(best, Signal.level(captured, frequency: 750, from: frame, frames: 4800))
                frame += 2400
            }
            print(
                "[measure] voice capture: \(frames) frames, best 100 ms level of the 750 Hz tone \(best) dBFS (played at \(mainLevel))"
            )
            #expect(frames > 9600)
            #expect(abs(best - Signal.decibels(0.5)) < 1)
        }

        @Test("daemon: the process callbacks neither allocate nor lock nor call syscall() in steady playback")
        func realtimeCallbackIsClean() async throws {
            // Positive control on the watched counters (not CRealtimeProbe_isInterposing, which counts in
            // the armed counters that the core's tests may be using at the same time).
            CRealtimeProbe_watchThread(CRealtimeProbe_currentThread())
            CRealtimeProbe_resetWatched()
            free(strdup("a probe allocation"))  // inside libc, so no optimizer can elide it
            let control = CRealtimeProbe_readWatched()
            CRealtimeProbe_unwatch()
            try #require(control.allocations >= 1, "the probe's malloc is not the one the process calls")
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            try rig.openOverlay()
            let pcm = try PCMBufferSource(samples: [Float](repeating: 0.01, count: 9600), loops: true)
            _ = try rig.engine.openStream(
                StreamID(rawValue: 3), descriptor: StreamDescriptor(name: "clip", role: .notification), source: pcm,
                gain: 0.5, paused: false)
            let ring = try AudioRingBuffer(minimumCapacity: 1 << 16)
            try rig.engine.startCapture(into: ring)
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            let thread = try #require(rig.engine.dataThreadID)
            CRealtimeProbe_watchThread(pthread_t(thread))
            CRealtimeProbe_resetWatched()
            let cycles = rig.engine.processCycles
            for step in 0..<10 {  // gain ramps and pauses while counting, as a session would send them
                rig.main?.setGain(step.isMultiple(of: 2) ? 0.1 : 1, ramp: .milliseconds(50))
                rig.overlay?.setPaused(step == 5)
                try await Task.sleep(for: .milliseconds(100))
                _ = ring.readAll()
            }
            let counts = CRealtimeProbe_readWatched()
            CRealtimeProbe_unwatch()
            let counted = rig.engine.processCycles - cycles
            print(
                "[measure] data thread over \(counted) process callbacks: \(counts.allocations) allocations, \(counts.frees) frees, \(counts.locks) locks, \(counts.syscalls) syscall()"
            )
            #expect(counted > 40)
            #expect(counts.allocations == 0)
            #expect(counts.frees == 0)
            #expect(counts.locks == 0)
            #expect(counts.syscalls == 0)

            // Not a promise, a record: the same counts while a new stream joins (its first callbacks
            // and PipeWire's own work adding its node to the data loop).
            CRealtimeProbe_watchThread(pthread_t(thread))
            CRealtimeProbe_resetWatched()
            _ = try rig.engine.openStream(
                StreamID(rawValue: 4), descriptor: StreamDescriptor(name: "late", role: .game),
                source: SineSource(frequency: 2000, amplitude: 0.1), gain: 1, paused: false)
            try await rig.recorder.waitForTone(2000, atLeast: Signal.decibels(0.1) - 1)
            let joining = CRealtimeProbe_readWatched()
            CRealtimeProbe_unwatch()
            print(
                "[measure] data thread while a stream joins: \(joining.allocations) allocations, \(joining.frees) frees, "
                    + "\(joining.locks) locks, \(joining.syscalls) syscall()")
        }
    }
}
