import CRealtimeProbe
import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTesting
import Synchronization
import Testing

/// An engine under test with its event log, and a recorder of the sink it plays to.
final class EngineRig {
    let engine: PipeWireEngine
    let events = EventLog<EngineEvent>()
    let recorder: SinkRecorder
    /// The controls of the streams opened by ``openMain(gain:paused:)`` and ``openOverlay()``.
    private(set) var main: (any StreamControl)?
    private(set) var overlay: (any StreamControl)?

    init(layout: StreamLayout = .perStream) throws {
        try Daemon.ensureRunning()
        engine = try PipeWireEngine(applicationName: "SharedSession tests", layout: layout)
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
