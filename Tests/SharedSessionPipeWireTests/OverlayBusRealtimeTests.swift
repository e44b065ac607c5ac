import CRealtimeProbe
import SharedSession
import SharedSessionTestSupport
import Testing

@testable import SharedSessionPipeWire

/// The overlay bus's mixing (``OverlayBus/render(into:frames:suspended:)``, what the bus node's process
/// callback runs) under the real-time probe, driven on the test's thread as the data thread drives it:
/// no daemon needed. The kernel alone is covered by the core's RealtimeRenderTests; this covers the
/// engine's mixing code around it: the table read, the metered overlay rendered alone into the scratch
/// and added in, the overlay that follows another's activity rendered last, and table swaps between cycles.
@Suite("Overlay bus under the real-time probe", .probeInterposes)
struct OverlayBusRealtimeTests {
    static let quanta = [256, 1024, 4096, AudioFormat.maximumQuantum, 333]

    /// What a run of the bus counted and heard.
    struct BusRun {
        var counts = CRealtimeProbe_Counts()
        var lastCall = ""
        var voluntarySwitches: Int64 = 0
        var cycles = 0
        /// Cycles whose output's RMS was above −40 dBFS.
        var audibleCycles = 0
        /// Cycles of the suspended round after its first (the de-click), which must be digital silence.
        var silentCycles = 0

        var isClean: Bool {
            counts.allocations == 0 && counts.frees == 0 && counts.locks == 0 && counts.syscalls == 0
                && voluntarySwitches == 0
        }

        var summary: String {
            "\(cycles) cycles (\(audibleCycles) heard, \(silentCycles) silent), \(counts.allocations) allocations, "
                + "\(counts.frees) frees, \(counts.locks) locks, \(counts.syscalls) system calls, "
                + "\(voluntarySwitches) voluntary context switches; last counted call: "
                + (lastCall.isEmpty ? "none" : lastCall)
        }
    }

    /// Three overlays on a bus: a constant 0.25, a metered 1 kHz tone at 0.5 (`metered`, rendered alone
    /// and added in) and a constant 0.1 that ducks under the tone's activity (rendered last); a fourth
    /// leaves and comes back between rounds (the table swapped). Five rounds of 8 cycles at quanta of 256
    /// to 8192 frames, with gain ramps, and the third round suspended; the probe armed only around
    /// each cycle.
    static func run(metered: any AudioSource, extra: (any AudioSource)? = nil) throws -> BusRun {
        _ = Probe.hookInstalled
        let bus = OverlayBus(format: .standard)
        let constant = StreamRenderer(
            source: try PCMBufferSource(samples: [Float](repeating: 0.25, count: 960), loops: true), gain: 1,
            paused: false)
        let tone = StreamRenderer(source: metered, gain: 1, paused: false)
        let activity = try #require(tone.activityMeter())
        let follower = StreamRenderer(
            source: try PCMBufferSource(samples: [Float](repeating: 0.1, count: 960), loops: true), gain: 1,
            paused: false)
        follower.setActivityDuck(
            gain: 0.1, following: [activity], attack: .milliseconds(20), release: .milliseconds(400))
        let visitor = StreamRenderer(source: try SineSource(frequency: 300, amplitude: 0.1), gain: 1, paused: false)
        bus.add(StreamID(rawValue: 1), renderer: constant)
        bus.add(StreamID(rawValue: 2), renderer: tone)
        bus.add(StreamID(rawValue: 3), renderer: follower)
        if let extra { bus.add(StreamID(rawValue: 5), renderer: StreamRenderer(source: extra, gain: 1, paused: false)) }
        let output = UnsafeMutablePointer<Float>.allocate(capacity: AudioFormat.maximumQuantum * 2)
        defer { output.deallocate() }
        // Warm-up on this thread first, as the real-time notes require (generic metadata, lazy globals).
        bus.render(into: output, frames: 1024, suspended: false)
        var result = BusRun()
        CRealtimeProbe_reset()
        for (round, frames) in quanta.enumerated() {
            // The loop thread's work between cycles: ramps, and the table swapped as an overlay comes and goes.
            constant.setGain(round % 2 == 0 ? 0.5 : 1, rampFrames: 7200)
            if round % 2 == 0 {
                bus.add(StreamID(rawValue: 4), renderer: visitor)
            } else {
                bus.remove(StreamID(rawValue: 4))
            }
            bus.collect()
            let suspended = round == 2
            for index in 0..<8 {
                let switches = CRealtimeProbe_voluntarySwitches()
                CRealtimeProbe_armCurrentThread()
                bus.render(into: output, frames: frames, suspended: suspended)
                CRealtimeProbe_disarmCurrentThread()
                result.voluntarySwitches += CRealtimeProbe_voluntarySwitches() - switches
                result.cycles += 1
                let samples = Array(UnsafeBufferPointer(start: output, count: frames * 2))
                if try meter.rms(samples) > -40 { result.audibleCycles += 1 }
                if try suspended && index > 0 && meter.isSilent(samples) { result.silentCycles += 1 }
            }
        }
        result.counts = CRealtimeProbe_read()
        result.lastCall = String(cString: CRealtimeProbe_lastCall())
        return result
    }

    @Test("the bus's mixing allocates nothing, locks nothing, makes no system call and never waits, and mixes")
    func busMixingIsRealtimeSafe() throws {
        try Probe.require()
        let run = try Self.run(metered: SineSource(frequency: 1000, amplitude: 0.5))
        print("[measure] overlay bus mixing: \(run.summary)")
        #expect(run.cycles == 40)
        #expect(
            run.audibleCycles == 33, "every cycle rendered the overlays but the suspended round's after its de-click")
        #expect(run.silentCycles == 7, "the suspended round is silent after its de-click")
        #expect(run.counts.allocations == 0, "last counted call: \(run.lastCall)")
        #expect(run.counts.frees == 0, "last counted call: \(run.lastCall)")
        #expect(run.counts.locks == 0, "last counted call: \(run.lastCall)")
        #expect(run.counts.syscalls == 0, "last counted call: \(run.lastCall)")
        #expect(run.voluntarySwitches == 0)
        #expect(run.isClean)
    }

    @Test(
        "an overlay that reads the clock fails the probe on the bus, named, as a plain overlay and as the metered one (positive control)",
        arguments: [false, true])
    func brokenOverlayFailsTheProbe(metered: Bool) throws {
        try Probe.require()
        // ClockReadingSource: a 4 kHz tone whose render reads ContinuousClock.now (clock_gettime).
        let run =
            metered
            ? try Self.run(metered: ClockReadingSource())
            : try Self.run(metered: SineSource(frequency: 1000, amplitude: 0.5), extra: ClockReadingSource())
        print("[measure] overlay bus with a \(metered ? "metered " : "")overlay that reads the clock: \(run.summary)")
        #expect(!run.isClean)
        #expect(run.counts.syscalls >= 40, "one clock read per cycle at least")
        #expect(run.lastCall == "clock_gettime")
        #expect(run.audibleCycles == 33, "the broken bus still mixed")
    }
}
