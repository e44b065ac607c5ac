import SharedSession
import Testing

@testable import SharedSessionEnginePolicy

/// The adoption's state machine when the session's gain reaches the nodes through loopbacks
/// (``AdoptionCarrier/loopback``): what the engine is told to do, without a daemon.
@Suite("Node adoption's state machine, through loopbacks")
struct AdoptionLoopbackMachineTests {
    typealias Action = AdoptionMachine.Action
    static let stream = AdoptionMachineTests.stream
    static let node = AdoptionMachineTests.node
    static let client = AdoptionMachineTests.client
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    /// A machine through loopbacks, adopting for ``stream`` with ``node`` announced and described;
    /// returns the actions of the node's binding (at 10 ms, `running` as given).
    func adopted(gain: Float = 1, ducks: Bool = false, running: Bool = false) -> (AdoptionMachine, [Action]) {
        var machine = AdoptionMachine(
            book: AdoptionBook(ownProcessID: 99, ownPrefix: "sharedsession.99.1", ancestors: { _ in [] }),
            throughLoopbacks: true)
        _ = machine.open(
            Self.stream, rule: AdoptionMachineTests.rule, ducksWhilePlaying: ducks, gain: gain, paused: false,
            at: at(0))
        _ = machine.clientAppeared(Self.client, properties: ["application.name": "gst-launch-1.0"], at: at(0))
        _ = machine.nodeAppeared(Self.node, properties: AdoptionPolicyTests.gst, at: at(0))
        _ = machine.clientInfo(Self.client, properties: AdoptionPolicyTests.gstClient, at: at(5))
        let bound = machine.nodeInfo(Self.node, properties: AdoptionPolicyTests.gst, running: running, at: at(10))
        _ = machine.volumes(Self.node, channel: [0.5, 0.5], soft: nil, at: at(12))
        return (machine, bound)
    }

    @Test("the automatic carrier is the loopback exactly where the watchdog would die with the host")
    func automaticCarrier() {
        #expect(AdoptionCarrier.automatic.throughLoopbacks(watchdogSharesFate: true))
        #expect(!AdoptionCarrier.automatic.throughLoopbacks(watchdogSharesFate: false))
        #expect(AdoptionCarrier.loopback.throughLoopbacks(watchdogSharesFate: false))
        #expect(!AdoptionCarrier.softVolumes.throughLoopbacks(watchdogSharesFate: true))
    }

    @Test("a matching node is routed through a loopback at the session's gain; no watchdog is told")
    func binding() {
        let (_, bound) = adopted(gain: 0.1)
        #expect(
            bound == [
                .adoptedByGraph(Self.node), .route(node: Self.node, stream: Self.stream, name: "gst-launch-1.0"),
                .write(node: Self.node, stream: Self.stream, soft: 0.1),
                .emit(
                    .adopted(stream: Self.stream, node: Self.node, name: "gst-launch-1.0", latency: .milliseconds(10))),
            ])
    }

    @Test("closing the stream takes the node off its loopback, confirmed by a sync; nothing of the node is written")
    func giveBack() {
        var (machine, _) = adopted(gain: 0.1)
        #expect(machine.close(Self.stream) == [.unroute(Self.node), .confirmGiveBack([Self.node])])
        #expect(machine.giveBackAll().isEmpty)
    }

    @Test("a volume the user sets on the node is the node's: nothing written, nothing reported, no settle writes")
    func userVolume() {
        var (machine, _) = adopted(gain: 0.1)
        #expect(machine.volumes(Self.node, channel: [0.25, 0.25], soft: 0.25, at: at(2000)).isEmpty)
        #expect(machine.nextDue(after: at(20), quantum: 1024) == nil)
        #expect(machine.tick(at: at(1500), quantum: 1024).isEmpty)
        // The gain still reaches the loopback, and the give-back is the loopback's removal.
        let command = AdoptionMachine.Command(gain: 1, ramp: .zero, paused: nil)
        #expect(
            machine.commands([Self.stream: command], suspended: false, at: at(3000), quantum: 1024)
                == [.write(node: Self.node, stream: Self.stream, soft: 1)])
        #expect(machine.giveBackAll() == [.unroute(Self.node), .confirmGiveBack([Self.node])])
    }

    @Test("the move's few stopped cycles neither release an overlay's duck nor take it again")
    func moveFlap() {
        var (machine, bound) = adopted(gain: 1, ducks: true, running: true)
        #expect(bound.contains(.report(.streamPlaying(stream: Self.stream, playing: true))))
        // The session manager relinks the node: it stops for a few cycles and runs again.
        #expect(machine.nodeInfo(Self.node, properties: nil, running: false, at: at(60)).isEmpty)
        #expect(machine.nextDue(after: at(60), quantum: 1024) == at(10) + AdoptionMachine.moveSettle)
        #expect(machine.nodeInfo(Self.node, properties: nil, running: true, at: at(170)).isEmpty)
        #expect(machine.tick(at: at(600), quantum: 1024).isEmpty)
        // A stop after the move's settling time is the player's.
        #expect(
            machine.nodeInfo(Self.node, properties: nil, running: false, at: at(900))
                == [
                    .emit(.playing(stream: Self.stream, false)),
                    .report(.streamPlaying(stream: Self.stream, playing: false)),
                ])
    }

    @Test("a node that stops during the move and stays stopped is reported stopped when the settling time ends")
    func stopDuringMove() {
        var (machine, _) = adopted(gain: 1, ducks: true, running: true)
        #expect(machine.nodeInfo(Self.node, properties: nil, running: false, at: at(60)).isEmpty)
        #expect(machine.tick(at: at(400), quantum: 1024).isEmpty)
        #expect(
            machine.tick(at: at(10) + AdoptionMachine.moveSettle, quantum: 1024)
                == [
                    .emit(.playing(stream: Self.stream, false)),
                    .report(.streamPlaying(stream: Self.stream, playing: false)),
                ])
        #expect(machine.nextDue(after: at(600), quantum: 1024) == nil)
    }
}
