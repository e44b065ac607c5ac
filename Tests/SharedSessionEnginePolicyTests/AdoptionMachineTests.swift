import SharedSession
import Testing

@testable import SharedSessionEnginePolicy

/// The adoption's state machine, input by input, without a daemon: what the engine is told to do
/// (bind, write soft volumes, tell the watchdog, report) for each thing the registry, the nodes and the
/// session's controls say.
@Suite("Node adoption's state machine")
struct AdoptionMachineTests {
    typealias Action = AdoptionMachine.Action
    static let stream = StreamID(rawValue: 3)
    static let node: UInt32 = 50
    static let client: UInt32 = 40
    static let rule = AdoptionRule(.applicationName("gst-launch-1.0"))
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    func machine() -> AdoptionMachine {
        AdoptionMachine(book: AdoptionBook(ownProcessID: 99, ownPrefix: "sharedsession.99.1", ancestors: { _ in [] }))
    }

    /// A machine adopting for ``stream`` (gain `gain`, ducking while it plays if `ducks`) with
    /// ``node`` announced, described and bound at 10 ms, its user volume `user` reported.
    func adopted(gain: Float = 1, ducks: Bool = false, user: Float = 0.5) -> AdoptionMachine {
        var machine = machine()
        _ = machine.open(Self.stream, rule: Self.rule, ducksWhilePlaying: ducks, gain: gain, paused: false, at: at(0))
        _ = machine.clientAppeared(Self.client, properties: ["application.name": "gst-launch-1.0"], at: at(0))
        _ = machine.nodeAppeared(Self.node, properties: AdoptionPolicyTests.gst, at: at(0))
        _ = machine.clientInfo(Self.client, properties: AdoptionPolicyTests.gstClient, at: at(5))
        _ = machine.nodeInfo(Self.node, properties: AdoptionPolicyTests.gst, running: false, at: at(10))
        _ = machine.volumes(Self.node, channel: [user, user], soft: nil, at: at(12))
        return machine
    }

    @Test("a matching node is bound: the graph told, the watchdog told before the first write, then reported")
    func binding() {
        var machine = machine()
        let opened = machine.open(
            Self.stream, rule: Self.rule, ducksWhilePlaying: false, gain: 0.1, paused: false, at: at(0))
        #expect(opened.isEmpty)
        #expect(machine.clientAppeared(Self.client, properties: [:], at: at(0)) == [.bindClient(Self.client)])
        #expect(
            machine.nodeAppeared(Self.node, properties: AdoptionPolicyTests.gst, at: at(0))
                == [.bindClient(Self.client), .bindNode(Self.node)])
        #expect(machine.clientInfo(Self.client, properties: AdoptionPolicyTests.gstClient, at: at(5)).isEmpty)
        let bound = machine.nodeInfo(Self.node, properties: AdoptionPolicyTests.gst, running: false, at: at(10))
        #expect(
            bound == [
                .adoptedByGraph(Self.node), .watchdogAdopted(Self.node),
                .write(node: Self.node, stream: Self.stream, soft: 0.1),
                .emit(
                    .adopted(stream: Self.stream, node: Self.node, name: "gst-launch-1.0", latency: .milliseconds(10))),
            ])
    }

    @Test("the user's channel volume is what the node gets back on close, confirmed by a sync")
    func giveBack() {
        var machine = adopted(gain: 0.1, user: 0.5)
        #expect(
            machine.close(Self.stream)
                == [.write(node: Self.node, stream: Self.stream, soft: 0.5), .confirmGiveBack([Self.node])])
        #expect(machine.giveBackAll().isEmpty)
        #expect(!machine.adopts(Self.stream))
    }

    @Test("a gain command ramps in steps, one a quantum, ending on the target; a pause fades to silence")
    func ramps() {
        var machine = adopted(gain: 1)
        for ms in [100, 300, 1500] { _ = machine.tick(at: at(ms), quantum: 1024) }  // the settle writes
        let command = AdoptionMachine.Command(gain: 0.1, ramp: .milliseconds(100), paused: nil)
        let first = machine.commands([Self.stream: command], suspended: false, at: at(3000), quantum: 1024)
        // Nothing is due at the ramp's very start; the next step one quantum (21.3 ms at 1024) on.
        #expect(first.isEmpty)
        #expect(machine.nextDue(after: at(3000), quantum: 1024) == at(3000) + .nanoseconds(21_333_333))
        var written: [Float] = []
        // The engine's timer fires when the machine says the next step is due.
        var now = at(3000)
        while let due = machine.nextDue(after: now, quantum: 1024), due < at(3400) {
            now = due
            for case .write(_, _, let soft) in machine.tick(at: now, quantum: 1024) { written.append(soft) }
        }
        #expect(written.count == NodeVolumeRamp.steps(duration: .milliseconds(100), quantum: 1024))
        #expect(written.count > 1)
        #expect(written.last == 0.1)
        #expect(zip(written, written.dropFirst()).allSatisfy { $0 > $1 })
        let paused = machine.commands(
            [Self.stream: .init(gain: nil, paused: true)], suspended: false, at: at(4000), quantum: 1024)
        #expect(paused == [.emit(.pauseRequested(stream: Self.stream, true))])
        for ms in stride(from: 4010, through: 4300, by: 10) { _ = machine.tick(at: at(ms), quantum: 1024) }
        #expect(machine.members[Self.stream]?.gain == 0)
    }

    @Test("a user's channel volume is reported to the session before the host hears of it; a restore is not")
    func userVolume() {
        var machine = adopted(gain: 0.1, user: 0.5)
        // Within the restore window and before the node ran: WirePlumber's restore, written over, not reported.
        #expect(
            machine.volumes(Self.node, channel: [0.8, 0.8], soft: nil, at: at(300))
                == [.write(node: Self.node, stream: Self.stream, soft: 0.1)])
        let user = machine.volumes(Self.node, channel: [0.25, 0.25], soft: nil, at: at(3000))
        #expect(
            user == [
                .write(node: Self.node, stream: Self.stream, soft: 0.1),
                .report(.externalVolumeChange(stream: Self.stream, volume: 0.25)),
                .emit(.userVolume(stream: Self.stream, node: Self.node, volume: 0.25)),
            ])
        // Our own soft volume coming back is ours; another program's is written over.
        #expect(machine.volumes(Self.node, channel: [0.25, 0.25], soft: 0.1, at: at(3010)).isEmpty)
        let foreign = machine.volumes(Self.node, channel: [0.25, 0.25], soft: 0.7, at: at(3020))
        #expect(foreign.contains(.write(node: Self.node, stream: Self.stream, soft: 0.1)))
    }

    @Test("an overlay that ducks while it plays reports it to the session as it starts and stops")
    func ducksWhilePlaying() {
        var machine = adopted(ducks: true)
        #expect(
            machine.nodeInfo(Self.node, properties: nil, running: true, at: at(100))
                == [
                    .emit(.playing(stream: Self.stream, true)),
                    .report(.streamPlaying(stream: Self.stream, playing: true)),
                ])
        #expect(
            machine.nodeInfo(Self.node, properties: nil, running: false, at: at(200))
                == [
                    .emit(.playing(stream: Self.stream, false)),
                    .report(.streamPlaying(stream: Self.stream, playing: false)),
                ])
        _ = machine.nodeInfo(Self.node, properties: nil, running: true, at: at(300))
        let closed = machine.close(Self.stream)
        #expect(closed.first == .emit(.playing(stream: Self.stream, false)))
        // A main (no duck of its own) only tells the host.
        var main = adopted(ducks: false)
        #expect(
            main.nodeInfo(Self.node, properties: nil, running: true, at: at(100)) == [
                .emit(.playing(stream: Self.stream, true))
            ])
    }

    @Test("closing an overlay that plays tells the host it stopped but not the session: the close released its duck")
    func noReportAfterClose() {
        var machine = adopted(ducks: true)
        _ = machine.nodeInfo(Self.node, properties: nil, running: true, at: at(100))
        let closed = machine.close(Self.stream)
        #expect(closed.first == .emit(.playing(stream: Self.stream, false)))
        #expect(
            !closed.contains { action in
                if case .report = action { true } else { false }
            })
        #expect(closed.contains(.write(node: Self.node, stream: Self.stream, soft: 0.5)))
    }

    @Test("settle writes follow a node's appearing at 50 ms, 250 ms and 1 s, then stop")
    func settleWrites() {
        var machine = adopted(gain: 0.1)
        var writes: [Int] = []
        for ms in stride(from: 20, through: 2000, by: 10) where !machine.tick(at: at(ms), quantum: 1024).isEmpty {
            writes.append(ms)
        }
        #expect(writes == [50, 250, 1000])
        #expect(machine.nextDue(after: at(2000), quantum: 1024) == nil)
    }

    @Test("a node that goes is released, the watchdog told; a disconnect releases everything")
    func removal() {
        var machine = adopted()
        let removed = machine.removed(Self.node, at: at(500))
        #expect(removed.first == .watchdogReleased(Self.node))
        #expect(
            removed.contains(
                .emit(.released(stream: Self.stream, node: Self.node, name: "gst-launch-1.0", midRamp: false))))
        #expect(removed.last == .unbind(Self.node))
        var other = adopted()
        let disconnected = other.disconnected()
        #expect(disconnected.last == .watchdogReleasedAll)
        #expect(other.bound.isEmpty)
    }

    @Test(
        "while something is adopted, another client's node is other audio only once its properties show no rule takes it"
    )
    func otherAudio() {
        var machine = adopted()
        let deferred = machine.defersOtherAudio(id: 60, mediaClass: "Stream/Output/Audio", name: "pw-play")
        let own = machine.defersOtherAudio(id: 61, mediaClass: "Stream/Output/Audio", name: "sharedsession.99.1.main")
        #expect(deferred)
        #expect(!own)
        _ = machine.nodeAppeared(
            60, properties: ["node.name": "pw-play", "media.class": "Stream/Output/Audio"], at: at(20))
        #expect(
            machine.nodeInfo(60, properties: ["node.name": "pw-play"], running: true, at: at(30))
                == [.otherAudio(id: 60, mediaClass: "Stream/Output/Audio", name: "pw-play")])
    }
}
