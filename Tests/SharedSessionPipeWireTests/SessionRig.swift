import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTesting
import Testing

/// A ``SharedSession`` on a ``PipeWireEngine``, its events, and a recorder of the sink.
final class SessionRig {
    let engine: PipeWireEngine
    let session: SharedSession
    let recorder: SinkRecorder
    let log: EventLog<SessionEvent>

    init(
        policy: SessionPolicy = .default, layout: StreamLayout = .perStream,
        adoptionCarrier: AdoptionCarrier = .automatic
    ) throws {
        try Daemon.ensureRunning()
        engine = try PipeWireEngine(
            applicationName: "SharedSession session tests", layout: layout, adoptionCarrier: adoptionCarrier)
        session = SharedSession(engine: engine, policy: policy)
        recorder = try SinkRecorder()
        log = EventLog(session: session)
    }

    var events: [SessionEvent.Kind] { log.kinds }

    /// Waits for an event whose kind matches `predicate` (already logged or still to come), keeping
    /// the recording collected meanwhile; returns its kind, or nil after `timeout`.
    func wait(
        timeout: Duration = .seconds(5), for predicate: @escaping @Sendable (SessionEvent.Kind) -> Bool
    ) async -> SessionEvent.Kind? {
        let end = ContinuousClock.now + timeout
        repeat {
            if let event = await log.wait(timeout: .milliseconds(50), for: { predicate($0.kind) }) {
                return event.kind
            }
            recorder.poll()
        } while ContinuousClock.now < end
        return nil
    }

    /// What ``duckAndRelease(owner:)`` heard: the recording, where the duck and its release were asked
    /// for, and the main tone's level before the duck, under it and after the restore.
    struct DuckRound {
        let samples: [Float]
        let duckMark: Int
        let releaseMark: Int
        let before: Double
        let ducked: Double
        let restored: Double
    }

    /// Ducks the main for `owner` for 600 ms, releases it and records 900 ms more: the round the duck
    /// tests of both layouts measure.
    func duckAndRelease(owner: String) async throws -> DuckRound {
        let duckMark = recorder.mark()
        let duck = session.duck(owner: owner)
        try await recorder.record(for: .milliseconds(600))
        let releaseMark = recorder.mark()
        duck.release()
        try await recorder.record(for: .milliseconds(900))
        return DuckRound(
            samples: recorder.samples, duckMark: duckMark, releaseMark: releaseMark,
            before: try mainLevel(before: duckMark), ducked: try mainLevel(before: releaseMark),
            restored: try mainLevel())
    }

    /// The main tone's level over the 100 ms before `frame` (default: now).
    func mainLevel(before frame: Int? = nil) throws -> Double {
        try level(of: mainTone, before: frame ?? recorder.mark())
    }

    func overlayLevel(before frame: Int? = nil) throws -> Double {
        try level(of: overlayTone, before: frame ?? recorder.mark())
    }

    /// The level of `tone` over the 100 ms before `end`: the median of its ten 10 ms windows, so one
    /// graph cycle lost to the loaded machine (a whole quantum of silence in the recording, every
    /// client's nodes alike) cannot move it, while a stream at the wrong level moves every window (as
    /// `EngineTests.mainStreamPlays` reads the main stream's level).
    private func level(of tone: Double, before end: Int) throws -> Double {
        let samples = recorder.samples
        let levels = try (0..<10).map {
            try meter.toneLevel(samples, frequency: tone, frames: window(end - 4800 + $0 * 480, 480))
        }
        return DaemonTests.EngineTests.median(levels)
    }

    func openMain() throws -> StreamHandle {
        try session.openMainStream(source: SineSource(frequency: mainTone, amplitude: 0.5))
    }

    func openOverlay(backgroundMusic: Bool = false) throws -> StreamHandle {
        try session.openStream(
            StreamDescriptor(name: "overlay", role: .music, isBackgroundMusic: backgroundMusic),
            source: SineSource(frequency: overlayTone, amplitude: 0.25))
    }

    func stop() {
        session.close()
        log.stop()
        recorder.stop()
        engine.shutdown()
    }
}
