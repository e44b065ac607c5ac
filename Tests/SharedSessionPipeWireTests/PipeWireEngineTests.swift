import CRealtimeProbe
import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTestSupport
import SharedSessionTesting
import Synchronization
import Testing

/// Tests that need a running PipeWire daemon: they share it, so they run one at a time, and their
/// timing is checked, so Scripts/test runs them in a process of their own after the CPU-heavy suites.
@Suite("PipeWire daemon", .serialized, .needsDaemon)
struct DaemonTests {}

let mainID = StreamID(rawValue: 1)
let overlayID = StreamID(rawValue: 2)
let mainTone = 1000.0  // 10 cycles in a 10 ms window: levels of two tones never leak into each other
let overlayTone = 3000.0
let mainLevel = LevelMeter.decibels(0.5)  // -6.02 dBFS for a 0.5 sine
let overlayLevel = LevelMeter.decibels(0.25)

/// Waits (up to 3 s, recording meanwhile) until `engine` runs at `frames` per quantum; returns the
/// quantum it ran at last.
func waitForQuantum(_ frames: Int, of engine: PipeWireEngine, recorder: SinkRecorder) async throws -> Int {
    let end = ContinuousClock.now + .seconds(3)
    while engine.quantum != frames, ContinuousClock.now < end { try await recorder.record(for: .milliseconds(20)) }
    return engine.quantum
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
            // Every sink there is, not only the default one, is named.
            let sinks = rig.engine.sinkNames
            print("[measure] sinks named in the refusal: \(sinks)")
            #expect(sinks.contains(sink))
            for name in sinks { #expect(error?.message.contains(name) == true, "\(name) not in the refusal") }
            // Naming a sink that exists plays on it.
            _ = try rig.engine.openStream(
                mainID, descriptor: StreamDescriptor(name: "main", role: .movie, target: sink),
                source: SineSource(frequency: mainTone, amplitude: 0.5), gain: 1, paused: false)
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
        }

        static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

        @Test("daemon: the main stream plays at its level on the null sink, on a real-time data thread")
        func mainStreamPlays() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            let start = try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(300))
            let samples = rig.recorder.samples
            // The median of twenty 10 ms windows: the level the stream plays at, which one quantum lost
            // to the loaded machine (a whole graph cycle, every client's nodes alike: see BENCHMARKS.md,
            // xruns) cannot move; a stream at the wrong level moves every window.
            let windows = (0..<20).map { window(start + 480 + $0 * 480, 480) }
            let level = Self.median(try windows.map { try meter.toneLevel(samples, frequency: mainTone, frames: $0) })
            let rms = Self.median(try windows.map { try meter.rms(samples, frames: $0) })
            let whole = try meter.toneLevel(samples, frequency: mainTone, frames: window(start + 480, 9600))
            print(
                "[measure] main stream: tone \(level) dBFS (median of 10 ms windows; over the 200 ms \(whole)), RMS "
                    + "\(rms) dBFS; quantum \(rig.engine.quantum); realtime \(rig.engine.isRealtime)"
            )
            #expect(abs(level - mainLevel) < 0.1)
            #expect(abs(rms - LevelMeter.decibels(0.5 / 2.squareRoot())) < 0.1)
            #expect(rig.engine.quantum > 0)
            #expect(rig.engine.isRealtime, "the data thread did not get SCHED_FIFO/RR (client-rt.conf, module-rt)")
            let own = Daemon.ownNodeNames()
            #expect(own.contains { $0.hasSuffix(".\(mainID.rawValue)") })
        }

        @Test(
            "daemon: a duck ramps the main stream down 20 dB as a 150 ms fade and back, the overlay untouched"
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

            let before = try meter.toneLevel(samples, frequency: mainTone, frames: window(duckMark - 4800, 4800))
            let ducked = try meter.toneLevel(samples, frequency: mainTone, frames: window(restoreMark - 4800, 4800))
            let restored = try meter.toneLevel(samples, frequency: mainTone, frames: window(end - 4800, 4800))
            let reached = try #require(
                try meter.firstWindowEnd(
                    samples, frequency: mainTone, atOrBelow: before - 19, frames: duckMark..<restoreMark))
            // Where the ramp is heard to begin, from the recording itself: the end of the first 10 ms
            // window 0.1 dB below the full level, less the 1 ms hop.
            let rampStart =
                try #require(
                    try meter.firstWindowEnd(
                        samples, frequency: mainTone, atOrBelow: before - 0.1, frames: duckMark..<restoreMark)) - 48
            let latency = milliseconds(reached - duckMark)
            let ramp = milliseconds(reached - rampStart)
            let quantum = Double(rig.engine.quantum) / 48
            print(
                "[measure] engine duck: before \(before) dB, ducked \(ducked - before) dB, restored "
                    + "\(restored - before) dB, request to -19 dB \(latency) ms, heard ramp to -19 dB \(ramp) ms "
                    + "(fade 150 ms, quantum \(quantum) ms)"
            )
            #expect(abs(ducked - before + 20) <= 0.1)
            #expect(abs(restored - before) <= 0.1)
            // Past the fade, two quanta and the 10 ms analysis window on a quiet machine; the request's
            // moment is the test thread's, so a loaded machine keeps five times that.
            #expect(latency <= 150 + LoadedMachine.bound(milliseconds: 2 * quantum + 10), "the duck came late")
            #expect(ramp <= 150 + 10, "the linear ramp reaches -19 dB at 148 ms; 10 ms window")
            var overlayLevels: [Double] = []
            var frame = duckMark - 4800
            while frame + 4800 <= end {
                overlayLevels.append(try meter.toneLevel(samples, frequency: overlayTone, frames: window(frame, 4800)))
                frame += 2400
            }
            #expect(overlayLevels.allSatisfy { abs($0 - overlayLevel) < 0.1 }, "overlay levels \(overlayLevels)")
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
            let started = await rig.events.wait { $0 == .system(.otherAudioStarted) }
            #expect(started != nil)
            player.waitUntilExit()
            let stopped = await rig.events.wait { $0 == .system(.otherAudioStopped) }
            #expect(stopped != nil)
        }

        @Test(
            "daemon: a volume set on a stream just after it connects (a session manager's restore) is undone, not reported"
        )
        func restoredVolumeIsUndone() async throws {
            let rig = try EngineRig()
            defer { rig.stop() }
            try rig.openMain()
            let opened = ContinuousClock.now
            var node: Int?
            let end = opened + .milliseconds(700)
            while node == nil, ContinuousClock.now < end {
                node = Daemon.ownNodeNames().first { $0.hasSuffix(".\(mainID.rawValue)") }.flatMap(
                    Daemon.nodeID(named:))
                if node == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            let id = try #require(node, "the stream's node did not appear in pw-dump within 700 ms")
            // What WirePlumber's restore-props does with a saved, ducked volume: 0.1 on a fresh stream.
            Daemon.run("pw-cli", ["set-param", "\(id)", "Props", "{ channelVolumes: [ 0.1, 0.1 ] }"])
            let setAfter = ContinuousClock.now - opened
            print("[measure] restore-props volume set \(setAfter.milliseconds) ms after the stream opened (window 1 s)")
            try #require(setAfter < .milliseconds(900), "the set-param came too late to test the restore window")
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await rig.recorder.record(for: .milliseconds(300))
            let level = try rig.recorder.mainLevelNow()
            print("[measure] main level after a restore-props volume of 0.1 was undone: \(level - mainLevel) dB")
            #expect(abs(level - mainLevel) < 0.1)
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
            let event = await rig.events.wait {
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
            let level = try meter.toneLevel(
                rig.recorder.samples, frequency: mainTone, frames: window(mark - 4800, 4800))
            print("[measure] main level after PipeWire's volume was put back to 1: \(level - mainLevel) dB")
            #expect(abs(level - mainLevel) < 0.1, "level \(level)")
        }

        @Test(
            "daemon: the default sink changing is a routeConfigurationChange and the streams follow it",
            .privateDaemonOnly
        )
        func defaultSinkChange() async throws {
            try Daemon.requirePrivate()
            let rig = try EngineRig()
            defer {
                Daemon.setDefaultSink(nil)
                rig.stop()
            }
            let original = try await rig.playMainOnDefaultSink()
            let other = "sharedsession-voice-in"
            let onOther = try SinkRecorder(sink: other)
            defer { onOther.stop() }
            Daemon.setDefaultSink(other)
            let event = await rig.events.wait {
                if case .system(.routeChanged) = $0 { true } else { false }
            }
            #expect(
                event
                    == .system(
                        .routeChanged(
                            RouteChange(
                                reason: .routeConfigurationChange, previousOutput: original, currentOutput: other))),
                "\(Self.routeContext(rig))")
            // The main stream plays on the new default sink.
            try await onOther.waitForTone(mainTone, atLeast: mainLevel - 1)
            try await onOther.record(for: .milliseconds(100))
            let onOtherLevel = try onOther.mainLevelNow()
            print("[measure] main on the new default sink: \(onOtherLevel) dBFS")
            Daemon.setDefaultSink(original)
            let back = await rig.events.wait {
                $0
                    == .system(
                        .routeChanged(
                            RouteChange(
                                reason: .routeConfigurationChange, previousOutput: other, currentOutput: original)))
            }
            #expect(back != nil, "\(Self.routeContext(rig))")
        }

        /// What a missing route event is read against: the engine's default sink, the events it sent,
        /// and the "default" metadata as `pw-metadata` reads it from outside.
        static func routeContext(_ rig: EngineRig) -> String {
            "engine's default sink \(rig.engine.defaultSink ?? "none"); events \(rig.events.all); metadata: "
                + Daemon.run("pw-metadata", ["-n", "default", "0"]).output
        }

        @Test(
            "daemon: voice capture receives what is played into the default source", .privateDaemonOnly
        )
        func voiceCapture() async throws {
            try Daemon.requirePrivate()
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
                best = max(best, try meter.toneLevel(captured, frequency: 750, frames: window(frame, 4800)))
                frame += 2400
            }
            print(
                "[measure] voice capture: \(frames) frames, best 100 ms level of the 750 Hz tone \(best) dBFS (played "
                    + "at \(mainLevel))"
            )
            #expect(frames > 9600)
            #expect(abs(best - LevelMeter.decibels(0.5)) < 0.1)
        }

        @Test(
            "daemon: the process callbacks neither allocate nor lock nor make a system call, in steady playback and while a stream joins, and render audio meanwhile",
            arguments: [StreamLayout.perStream, .mixedOverlays]
        )
        func realtimeCallbackIsClean(layout: StreamLayout) async throws {
            LockedProbe.setHook(CRealtimeProbe_noteLock)
            // Positive control on the watched counters (not CRealtimeProbe_isInterposing, which counts in
            // the armed counters that the core's tests may be using at the same time).
            CRealtimeProbe_watchThread(CRealtimeProbe_currentThread())
            CRealtimeProbe_resetWatched()
            free(strdup("a probe allocation"))  // inside libc, so no optimizer can elide it
            let control = CRealtimeProbe_readWatched()
            CRealtimeProbe_unwatch()
            try #require(control.allocations >= 1, "the probe's malloc is not the one the process calls")
            let rig = try EngineRig(layout: layout)
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
            let countedFrom = rig.recorder.mark()
            for step in 0..<10 {  // gain ramps and pauses while counting, as a session would send them
                rig.main?.setGain(step.isMultiple(of: 2) ? 0.1 : 1, ramp: .milliseconds(50))
                rig.overlay?.setPaused(step == 5)
                if layout.mixesOverlays, step == 3 || step == 7 {
                    // The bus's table swapped under the data thread: an overlay closed (it fades out, then
                    // leaves the table) and opened again; old tables are freed on this thread only.
                    let clip = StreamID(rawValue: 3)
                    if step == 3 {
                        rig.engine.closeStream(clip)
                    } else {
                        _ = try rig.engine.openStream(
                            clip, descriptor: StreamDescriptor(name: "clip", role: .notification), source: pcm,
                            gain: 0.5, paused: false)
                    }
                }
                try await rig.recorder.record(for: .milliseconds(100))
                _ = ring.readAll()
            }
            let counts = CRealtimeProbe_readWatched()
            let inCallbacks = CRealtimeProbe_readWatchedInCallbacks()
            let culprit = String(cString: CRealtimeProbe_lastWatchedCall())
            CRealtimeProbe_unwatch()
            let countedTo = rig.recorder.mark()
            let counted = rig.engine.processCycles - cycles
            // What the callbacks rendered while counted: the main tone in every 10 ms window, never
            // below its ducked level (gain 0.1), so the counted callbacks were playing, not idle.
            let heard = try meter.toneLevels(
                rig.recorder.samples, frequency: mainTone, window: 480, hop: 480,
                frames: (countedFrom + 2 * rig.engine.quantum)..<countedTo)
            let quietest = heard.map(\.level).min() ?? LevelMeter.silence
            print(
                "[measure] \(layout): data thread over \(counted) process callbacks (\(inCallbacks.callbacks) "
                    + "buffers): "
                    + "\(counts.allocations) allocations, \(counts.frees) frees, \(counts.locks) locks; inside the "
                    + "callbacks \(inCallbacks.allocations) allocations, \(inCallbacks.frees) frees, "
                    + "\(inCallbacks.locks) locks, \(inCallbacks.syscalls) system calls; PipeWire's own loop around "
                    + "them \(counts.syscalls - inCallbacks.syscalls) system calls; main tone in \(heard.count) "
                    + "10 ms windows, quietest \(quietest) dBFS"
            )
            #expect(counted > 40)
            #expect(inCallbacks.callbacks >= Int64(counted), "the probe saw every buffer the callbacks rendered")
            #expect(counts.allocations == 0)
            #expect(counts.frees == 0)
            #expect(counts.locks == 0)
            #expect(inCallbacks.syscalls == 0, "last system call inside a callback: \(culprit)")
            #expect(heard.count >= 60)
            #expect(quietest >= mainLevel - 20 - 0.5, "a 10 ms window of the counted span without the main tone")

            // The same while a fourth stream joins: its first callbacks and PipeWire's own work adding
            // its node to the data loop.
            CRealtimeProbe_watchThread(pthread_t(thread))
            CRealtimeProbe_resetWatched()
            _ = try rig.engine.openStream(
                StreamID(rawValue: 4), descriptor: StreamDescriptor(name: "late", role: .game),
                source: SineSource(frequency: 2000, amplitude: 0.1), gain: 1, paused: false)
            try await rig.recorder.waitForTone(2000, atLeast: LevelMeter.decibels(0.1) - 1)
            let joining = CRealtimeProbe_readWatched()
            let joiningInCallbacks = CRealtimeProbe_readWatchedInCallbacks()
            CRealtimeProbe_unwatch()
            print(
                "[measure] data thread while a fourth stream joins: \(joining.allocations) allocations, "
                    + "\(joining.frees) frees, \(joining.locks) locks; inside \(joiningInCallbacks.callbacks) "
                    + "callbacks \(joiningInCallbacks.syscalls) system calls")
            #expect(joining.allocations == 0)
            #expect(joining.frees == 0)
            #expect(joining.locks == 0)
            #expect(joiningInCallbacks.syscalls == 0)
            #expect(joiningInCallbacks.callbacks > 0)

            // Positive control on the data thread: a stream whose source reads the clock in its render
            // is caught inside the callbacks, named.
            CRealtimeProbe_watchThread(pthread_t(thread))
            CRealtimeProbe_resetWatched()
            _ = try rig.engine.openStream(
                StreamID(rawValue: 5), descriptor: StreamDescriptor(name: "broken", role: .game),
                source: try ClockReadingSource(), gain: 1, paused: false)
            try await rig.recorder.waitForTone(4000, atLeast: LevelMeter.decibels(0.1) - 1)
            let broken = CRealtimeProbe_readWatchedInCallbacks()
            let brokenCall = String(cString: CRealtimeProbe_lastWatchedCall())
            CRealtimeProbe_unwatch()
            rig.engine.closeStream(StreamID(rawValue: 5))
            print(
                "[measure] data thread with a source that reads the clock: \(broken.syscalls) system calls, last "
                    + "\(brokenCall)"
            )
            #expect(broken.syscalls > 0)
            #expect(brokenCall == "clock_gettime")
        }
    }
}

/// A 4 kHz tone at 0.1 whose render reads `ContinuousClock.now`: a source that breaks the real-time
/// rules, for the probe's positive control on the data thread.
final class ClockReadingSource: AudioSource {
    private let tone: SineSource
    private let sink = Atomic<Int>(0)

    init() throws { tone = try SineSource(frequency: 4000, amplitude: 0.1) }

    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        sink.store(ContinuousClock.now.hashValue, ordering: .relaxed)
        return tone.render(into: buffer, frames: frames)
    }
}
