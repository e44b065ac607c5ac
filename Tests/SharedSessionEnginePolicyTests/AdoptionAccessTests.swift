import SharedSession
import Testing

@testable import SharedSessionEnginePolicy

/// What the adoption does in a sandbox, without one: a node this client may not write, and a watchdog
/// that dies with the host.
@Suite("Node adoption in a sandbox, without a daemon")
struct AdoptionAccessTests {
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test("a node this client may not write is left alone, reported once, and never written or watched")
    func readOnlyNode() {
        var machine = AdoptionMachine(
            book: AdoptionBook(ownProcessID: 99, ownPrefix: "sharedsession.99.1", ancestors: { _ in [] }))
        let stream = AdoptionMachineTests.stream
        _ = machine.open(
            stream, rule: AdoptionMachineTests.rule, ducksWhilePlaying: false, gain: 0.1, paused: false, at: at(0))
        _ = machine.clientAppeared(40, properties: [:], at: at(0))
        _ = machine.nodeAppeared(50, properties: AdoptionPolicyTests.gst, writable: false, at: at(0))
        _ = machine.clientInfo(40, properties: AdoptionPolicyTests.gstClient, at: at(5))
        let described = machine.nodeInfo(50, properties: AdoptionPolicyTests.gst, running: true, at: at(10))
        #expect(described == [.emit(.notPermitted(stream: stream, node: 50, name: "gst-launch-1.0"))])
        // Its properties again (a new info): no second report, still no write.
        #expect(machine.nodeInfo(50, properties: AdoptionPolicyTests.gst, running: true, at: at(20)).isEmpty)
        #expect(machine.bound.isEmpty)
        // A writable node of the same player, later, is adopted as usual.
        _ = machine.nodeAppeared(51, properties: AdoptionPolicyTests.gst, at: at(30))
        let adopted = machine.nodeInfo(51, properties: AdoptionPolicyTests.gst, running: false, at: at(40))
        #expect(adopted.contains(.write(node: 51, stream: stream, soft: 0.1)))
        #expect(adopted.contains(.watchdogAdopted(51)))
    }

    @Test("the watchdog shares the host's fate only in a PID namespace of its own, and says how far")
    func sharedFate() throws {
        let machine = SharedFate(namespaceLink: "pid:[4026531836]", initCommand: "systemd\n", flatpak: false)
        #expect(machine.namespace == SharedFate.initialNamespace)
        #expect(machine.reason == nil)
        // Flatpak: bubblewrap is the init, and every death of the host ends the sandbox.
        let flatpak = SharedFate(namespaceLink: "pid:[4026532178]", initCommand: "bwrap\n", flatpak: true)
        #expect(flatpak.initCommand == "bwrap")
        let reason = try #require(flatpak.reason)
        #expect(reason.hasPrefix("this process runs in a Flatpak sandbox") && reason.contains("however it ends"))
        let bubblewrap = SharedFate(namespaceLink: "pid:[4026532178]", initCommand: "bwrap", flatpak: false)
        #expect(bubblewrap.reason?.hasPrefix("this process runs in a bubblewrap sandbox") == true)
        // Another container: only when it is stopped or killed whole.
        let container = SharedFate(namespaceLink: "pid:[4026532999]", initCommand: "tini", flatpak: false)
        #expect(container.reason?.contains("container") == true && container.reason?.contains("tini") == true)
        #expect(SharedFate(namespaceLink: nil, initCommand: nil, flatpak: true).reason == nil)
        #expect(SharedFate(namespaceLink: "garbage", initCommand: "bwrap", flatpak: true).reason == nil)
    }
}
