import SharedSession
import Testing

@testable import SharedSessionEnginePolicy

/// Node adoption's values, without a daemon: rules, the book of adopted nodes, the step schedule and
/// the tracking of our own writes.
@Suite("Node adoption without a daemon")
struct AdoptionPolicyTests {
    static let gst: [String: String] = [
        "node.name": "gst-launch-1.0", "media.class": "Stream/Output/Audio", "client.id": "40",
    ]
    static let gstClient: [String: String] = [
        "pipewire.sec.pid": "4242", "application.name": "gst-launch-1.0",
        "application.process.binary": "gst-launch-1.0",
    ]

    @Test("a rule matches on any of its criteria: pid (or a child), application name, binary, role, node name")
    func ruleMatching() throws {
        let node = ForeignNodeInfo(
            id: 7,
            properties: Self.gst.merging(Self.gstClient) { a, _ in a }.merging(["media.role": "Movie"]) { a, _ in a },
            ancestorProcessIDs: [4000, 300])
        #expect(AdoptionRule(.processID(4242, includingChildren: false)).matches(node))
        #expect(!AdoptionRule(.processID(4000, includingChildren: false)).matches(node))
        #expect(AdoptionRule(.processID(4000, includingChildren: true)).matches(node))
        #expect(AdoptionRule(.applicationName("gst-launch-1.0")).matches(node))
        #expect(AdoptionRule(.processBinary("gst-launch-1.0")).matches(node))
        #expect(AdoptionRule(.mediaRole("Movie")).matches(node))
        #expect(AdoptionRule(.nodeName("gst-launch-1.0")).matches(node))
        #expect(!AdoptionRule(.applicationName("mpv"), .mediaRole("Music")).matches(node))
        #expect(AdoptionRule(.applicationName("mpv"), .mediaRole("Movie")).matches(node))
        #expect(
            AdoptionRule(.applicationName("mpv"), .mediaRole("Movie")).criterion(matching: node) == .mediaRole("Movie"))
    }

    @Test("a PulseAudio client is known by the process it declared, not by the pulse server's socket")
    func pulseClientProcess() {
        // The client of a `gst-launch-1.0 … ! pulsesink` as pw-dump showed it on 0.3.65: the socket's
        // pid is pipewire-pulse's (12524), the player is 16268.
        let client: [String: String] = [
            "pipewire.sec.pid": "12524", "application.process.id": "16268", "pulse.server.type": "unix",
            "application.name": "gst-launch-1.0", "application.process.binary": "gst-launch-1.0",
        ]
        let node = ForeignNodeInfo(id: 9, properties: Self.gst.merging(client) { a, _ in a }, ancestorProcessIDs: [1])
        #expect(node.processID == 16268)
        #expect(AdoptionRule(.processID(16268, includingChildren: false)).matches(node))
        #expect(!AdoptionRule(.processID(12524, includingChildren: false)).matches(node))
        // A native client's declared id is the app's word; the socket's pid wins over it.
        let native = ForeignNodeInfo(
            id: 10, properties: Self.gstClient.merging(["application.process.id": "5"]) { a, _ in a })
        #expect(native.processID == 4242)
    }

    @Test("a rule with no criterion, an empty name, a bad pid or no wait is refused with what to fix")
    func badRules() {
        #expect(throws: SessionError.self) { try AdoptionRule(criteria: []).validate() }
        #expect(throws: SessionError.self) { try AdoptionRule(.applicationName("")).validate() }
        #expect(throws: SessionError.self) { try AdoptionRule(.processID(0, includingChildren: true)).validate() }
        #expect(throws: SessionError.self) {
            try AdoptionRule(.nodeName("x"), expectedWithin: .zero).validate()
        }
        do {
            try AdoptionRule(criteria: []).validate()
        } catch {
            #expect(error.code == .invalidValue)
            #expect(error.message.contains("at least one criterion"))
        }
        // Each refusal is an invalid value whose message says what to fix.
        let rules: [(AdoptionRule, String)] = [
            (AdoptionRule(criteria: []), "needs at least one criterion"),
            (AdoptionRule(.applicationName("")), "an empty name matches nothing"),
            (AdoptionRule(.processID(0, includingChildren: true)), "a process id is > 0"),
            (AdoptionRule(.nodeName("x"), expectedWithin: .zero), "give a positive time"),
        ]
        for (rule, fix) in rules {
            let error = #expect(throws: SessionError.self) { try rule.validate() }
            #expect(error?.code == .invalidValue)
            #expect(error?.message.contains(fix) == true, "\(error?.message ?? "accepted")")
        }
    }

    func book() -> AdoptionBook {
        AdoptionBook(ownProcessID: 99, ownPrefix: "sharedsession.99.1", ancestors: { _ in [] })
    }

    @Test("a node is bound once its info and its client's are known; it goes, and its successor is bound again")
    func bindAndRebind() {
        var book = book()
        let main = StreamID(rawValue: 1)
        let now = ContinuousClock.now
        #expect(book.adopt(main, rule: AdoptionRule(.applicationName("gst-launch-1.0")), at: now).isEmpty)
        book.nodeAppeared(50, properties: Self.gst)
        #expect(book.client(40, properties: Self.gstClient).isEmpty)  // the node's info is not there yet
        #expect(
            book.nodeInfo(50, properties: Self.gst, running: true) == [
                .bound(stream: main, node: 50), .playing(stream: main, true),
            ])
        #expect(book.removed(50) == [.unbound(stream: main, node: 50), .playing(stream: main, false)])
        book.nodeAppeared(51, properties: Self.gst.merging(["node.name": "gst-launch-1.0"]) { _, b in b })
        #expect(book.nodeInfo(51, properties: nil, running: false) == [.bound(stream: main, node: 51)])
        #expect(book.nodeInfo(51, properties: nil, running: true) == [.playing(stream: main, true)])
        #expect(book.disconnected() == [.unbound(stream: main, node: 51), .playing(stream: main, false)])
    }

    @Test("a rule matching the engine's own node leaves it alone and says so; one matching nothing is overdue once")
    func ownAndNothing() {
        var book = book()
        let main = StreamID(rawValue: 1)
        let start = ContinuousClock.now
        _ = book.adopt(main, rule: AdoptionRule(.mediaRole("Movie"), expectedWithin: .seconds(2)), at: start)
        book.nodeAppeared(60, properties: ["node.name": "sharedsession.99.1.1", "client.id": "41"])
        _ = book.client(41, properties: ["pipewire.sec.pid": "99"])
        #expect(
            book.nodeInfo(60, properties: ["media.role": "Movie"], running: true) == [
                .ownNodeSkipped(stream: main, node: 60, name: "sharedsession.99.1.1")
            ])
        #expect(book.overdue(at: start + .seconds(1)).isEmpty)
        #expect(book.nextWaitDeadline == start + .seconds(2))
        #expect(book.overdue(at: start + .seconds(2)).map(\.0) == [main])
        #expect(book.overdue(at: start + .seconds(3)).isEmpty)
        #expect(book.nextWaitDeadline == nil)
    }

    @Test("the step schedule is equal steps in dB, at most one step per write, down to silence through -60 dB")
    func stepSchedule() {
        let start = ContinuousClock.now
        let duck = NodeVolumeRamp(from: 1, to: 0.1, start: start, duration: .milliseconds(150))
        #expect(NodeVolumeRamp.steps(duration: .milliseconds(150), quantum: 1024) == 8)
        #expect(abs(NodeVolumeRamp.largestStep(from: 1, to: 0.1, steps: 7) - 20.0 / 7) < 1e-6)
        #expect(abs(Double(duck.gain(at: start + .milliseconds(75))) - 0.316227) < 1e-4)  // -10 dB halfway
        #expect(duck.gain(at: start + .milliseconds(150)) == 0.1)
        // A write long after the last one still moves one step only.
        let late = duck.gain(at: start + .milliseconds(140), after: 1, steps: 8)
        #expect(abs(20 * log10(Double(late)) + 2.5) < 0.01)
        let fade = NodeVolumeRamp(from: 1, to: 0, start: start, duration: .milliseconds(100))
        #expect(fade.gain(at: start + .milliseconds(100)) == 0)
        // To silence along the log scale through the -60 dB floor: -30 dB halfway.
        let halfway = 20 * log10(Double(fade.gain(at: start + .milliseconds(50))))
        #expect(abs(halfway + 30) < 0.01, "\(halfway) dB halfway")
        #expect(fade.gain(at: start + .milliseconds(99)) > 0)
    }

    @Test("our own writes come back as ours, even merged; any other value is someone else's")
    func echoes() {
        var echoes = VolumeEchoes()
        let now = ContinuousClock.now
        echoes.wrote(0.9, at: now)
        echoes.wrote(0.7, at: now)
        echoes.wrote(0.5, at: now)
        #expect(echoes.report(volume: 0.7, at: now) == .own)  // 0.9 was merged away
        #expect(echoes.report(volume: 0.5, at: now) == .own)
        #expect(echoes.report(volume: 0.125, at: now) == .external(volume: 0.125))
        echoes.wrote(0.3, at: now)
        #expect(echoes.report(volume: 0.3, at: now + .seconds(3)) == .external(volume: 0.3))
    }
}

#if canImport(Glibc)
    import Glibc
#endif
