import SharedSession
import Testing

@testable import SharedSessionEnginePolicy

/// The PipeWire engine's decisions, as plain values fed what a daemon would say: no daemon needed.
@Suite("PipeWire policies without a daemon")
struct PipeWirePolicyTests {
    static let t0 = ContinuousClock.now

    @Test("reconnect: first attempt at once after teardown's delay, then 1.5× longer up to 2 s; success reports")
    func reconnectBackoff() {
        var policy = ReconnectPolicy()
        #expect(!policy.isReconnecting)
        #expect(policy.attemptSucceeded(at: Self.t0) == nil)
        policy.lost(at: Self.t0)
        #expect(policy.isAttemptDue(at: Self.t0))
        policy.tornDown(at: Self.t0)
        #expect(!policy.isAttemptDue(at: Self.t0 + .milliseconds(99)))
        #expect(policy.isAttemptDue(at: Self.t0 + .milliseconds(100)))
        var now = Self.t0 + .milliseconds(100)
        var delays: [Duration] = []
        for _ in 0..<10 {
            policy.attemptFailed(at: now)
            var wait = Duration.zero
            while !policy.isAttemptDue(at: now + wait) { wait += .milliseconds(1) }
            delays.append(wait)
            now += wait
        }
        #expect(delays.prefix(3) == [.milliseconds(150), .milliseconds(225), .milliseconds(338)])
        #expect(delays.last == .seconds(2))
        let event = policy.attemptSucceeded(at: now)
        #expect(event == .reconnected(attempts: 11, downtime: now - Self.t0))
        #expect(!policy.isReconnecting)
        // A second loss starts over.
        policy.lost(at: now)
        policy.tornDown(at: now)
        #expect(policy.isAttemptDue(at: now + .milliseconds(100)))
    }

    @Test("graph: other clients' playback is other audio once, our own streams never are")
    func otherAudio() {
        var graph = GraphTracker(ownPrefix: "sharedsession.1.1")
        #expect(graph.nodeAdded(id: 10, mediaClass: "Stream/Output/Audio", name: "sharedsession.1.1.3") == [])
        #expect(
            graph.nodeAdded(id: 11, mediaClass: "Stream/Output/Audio", name: "pw-play") == [.system(.otherAudioStarted)]
        )
        #expect(graph.nodeAdded(id: 12, mediaClass: "Stream/Output/Audio", name: "firefox") == [])
        #expect(graph.nodeRemoved(id: 11) == [])
        #expect(graph.nodeRemoved(id: 12) == [.system(.otherAudioStopped)])
        #expect(
            graph.nodeAdded(id: 13, mediaClass: "Stream/Output/Audio", name: "mpv") == [.system(.otherAudioStarted)])
        #expect(graph.disconnected() == [.system(.otherAudioStopped)])
        #expect(graph.disconnected() == [])
    }

    @Test("graph: the default sink changing is a route change; its removal is the old device unavailable")
    func routes() {
        var graph = GraphTracker(ownPrefix: "x")
        _ = graph.nodeAdded(id: 1, mediaClass: "Audio/Sink", name: "speakers")
        _ = graph.nodeAdded(id: 2, mediaClass: "Audio/Sink", name: "headphones")
        #expect(graph.defaultSinkChanged(to: "speakers") == [], "the first value a connection learns is no change")
        #expect(graph.hasSink(named: "headphones"))
        #expect(graph.sinkNames == ["headphones", "speakers"])
        #expect(
            graph.defaultSinkChanged(to: "headphones") == [
                .system(
                    .routeChanged(
                        RouteChange(
                            reason: .routeConfigurationChange, previousOutput: "speakers", currentOutput: "headphones"))
                )
            ])
        #expect(graph.nodeRemoved(id: 1) == [])
        #expect(
            graph.nodeRemoved(id: 2) == [
                .system(.routeChanged(RouteChange(reason: .oldDeviceUnavailable, previousOutput: "headphones")))
            ])
        #expect(graph.defaultSinkChanged(to: nil) == [])
        #expect(graph.disconnected() == [])
        #expect(!graph.hasSink(named: "speakers"))
    }

    @Test(
        "stream health: paused by the server for longer than the grace and errors are faults; a paused stream while the connection is down is not"
    )
    func streamFaults() {
        var health = StreamHealth(connectedAt: Self.t0)
        #expect(StreamHealth.isNodeCreated(from: .connecting, to: .paused))
        #expect(health.changed(from: .connecting, to: .paused, error: nil, connectionBroken: false, at: Self.t0) == nil)
        #expect(health.changed(from: .paused, to: .streaming, error: nil, connectionBroken: false, at: Self.t0) == nil)
        #expect(health.reachedStreaming)
        #expect(health.changed(from: .streaming, to: .paused, error: nil, connectionBroken: true, at: Self.t0) == nil)
        #expect(health.nextDeadline == nil, "a pause while the connection is down waits for nothing")
        let pausedAt = Self.t0 + .seconds(1)
        #expect(health.changed(from: .streaming, to: .paused, error: nil, connectionBroken: false, at: pausedAt) == nil)
        #expect(health.nextDeadline == pausedAt + StreamHealth.renegotiationGrace + .milliseconds(1))
        #expect(health.check(at: pausedAt + StreamHealth.renegotiationGrace) == nil)
        let paused = health.check(at: pausedAt + StreamHealth.renegotiationGrace + .milliseconds(1))
        #expect(paused?.contains("paused by the server") == true)
        #expect(health.check(at: pausedAt + .seconds(5)) == nil, "reported once")
        let error = health.changed(from: .paused, to: .error, error: "no memory", connectionBroken: false, at: pausedAt)
        #expect(error == .fault("the server reported an error: no memory"))
    }

    @Test("stream health: paused by the server and streaming again within the grace is a renegotiation, not a fault")
    func renegotiation() {
        var health = StreamHealth(connectedAt: Self.t0)
        _ = health.changed(from: .paused, to: .streaming, error: nil, connectionBroken: false, at: Self.t0)
        let pausedAt = Self.t0 + .seconds(2)
        #expect(health.changed(from: .streaming, to: .paused, error: nil, connectionBroken: false, at: pausedAt) == nil)
        #expect(health.check(at: pausedAt + .milliseconds(4)) == nil)
        let back = health.changed(
            from: .paused, to: .streaming, error: nil, connectionBroken: false, at: pausedAt + .milliseconds(4))
        #expect(back == .renegotiated(paused: .milliseconds(4)))
        #expect(health.nextDeadline == nil)
        #expect(health.check(at: pausedAt + .seconds(1)) == nil, "nothing left to report")
    }

    @Test("stream health: a stream that never starts is reported once, after 3 s")
    func neverStreaming() {
        var health = StreamHealth(connectedAt: Self.t0)
        #expect(health.check(at: Self.t0 + .milliseconds(2999)) == nil)
        #expect(health.check(at: Self.t0 + .milliseconds(3001))?.contains("never reached STREAMING") == true)
        #expect(health.check(at: Self.t0 + .seconds(10)) == nil)
        var started = StreamHealth(connectedAt: Self.t0)
        _ = started.changed(from: .paused, to: .streaming, error: nil, connectionBroken: false, at: Self.t0)
        #expect(started.check(at: Self.t0 + .seconds(10)) == nil)
    }

    @Test("stream health: a volume in the first second is a restore, later one is the user's, ours is ignored")
    func volumes() {
        var health = StreamHealth(connectedAt: Self.t0)
        #expect(health.volumeReport([0.1, 0.1], own: 1, at: Self.t0 + .milliseconds(10)) == .restored)
        _ = health.changed(from: .paused, to: .streaming, error: nil, connectionBroken: false, at: Self.t0)
        #expect(health.volumeReport([0.1, 0.1], own: 1, at: Self.t0 + .milliseconds(999)) == .restored)
        #expect(health.volumeReport([0.4, 0.6], own: 1, at: Self.t0 + .seconds(2)) == .external(0.5))
        #expect(health.volumeReport([1, 1], own: 1, at: Self.t0 + .seconds(2)) == .own)
        #expect(health.volumeReport([], own: 1, at: Self.t0 + .seconds(2)) == .own)
    }
}

extension PipeWirePolicyTests {
    @Test("stream health: a node not started after 3 s is made again, up to 10 times; the fault counts from the first")
    func relinks() {
        var health = StreamHealth(connectedAt: Self.t0)
        #expect(!health.shouldRelink(at: Self.t0 + .milliseconds(2999)))
        #expect(health.shouldRelink(at: Self.t0 + .seconds(3)))
        var now = Self.t0
        for _ in 0..<10 {
            now += .seconds(3)
            #expect(health.shouldRelink(at: now))
            health = health.relinked(at: now)
        }
        #expect(health.relinks == 10)
        #expect(!health.shouldRelink(at: now + .seconds(5)), "it gives up after ten")
        #expect(health.firstConnectedAt == Self.t0)
        // The never-started fault counts from the first node, once, whatever the relinks.
        var fresh = StreamHealth(connectedAt: Self.t0).relinked(at: Self.t0 + .seconds(1))
        #expect(fresh.check(at: Self.t0 + .milliseconds(3001)) != nil, "3 s after the first node, not the second")
        #expect(fresh.check(at: Self.t0 + .seconds(4)) == nil)
        // A node that started is never made again.
        var started = StreamHealth(connectedAt: Self.t0)
        _ = started.changed(from: .paused, to: .streaming, error: nil, connectionBroken: false, at: Self.t0)
        #expect(!started.shouldRelink(at: Self.t0 + .seconds(5)))
        _ = fresh
    }
}

extension PipeWirePolicyTests {
    @Test(
        "stream health: a node the server put in error is made again 250 ms later, then 0.5, 1 and 2 s, then 3 s after it was made; the error reported once"
    )
    func relinksAfterAnError() throws {
        var health = StreamHealth(connectedAt: Self.t0)
        var now = Self.t0 + .milliseconds(100)
        var reports: [StreamHealth.Report?] = []
        var waited: [Duration] = []
        for _ in 0..<6 {
            let report = health.changed(
                from: .connecting, to: .error, error: "no node available", connectionBroken: false, at: now)
            reports.append(report)
            let due = try #require(health.nextDeadline)
            #expect(!health.shouldRelink(at: due - .milliseconds(1)))
            #expect(health.shouldRelink(at: due))
            waited.append(due - now)
            now = due
            health = health.relinked(at: now)
            now += .milliseconds(10)
        }
        // Capped by the 3 s after the node was made, 10 ms before its error.
        #expect(
            waited == [250, 500, 1000, 2000, 2990, 2990].map { Duration.milliseconds($0) }, "waited \(waited)")
        #expect(reports.first == .fault("the server reported an error: no node available"))
        #expect(reports.dropFirst().allSatisfy { $0 == nil }, "reported once: \(reports)")
        // Once a node plays, a later error is reported again, and never brings a relink.
        _ = health.changed(from: .paused, to: .streaming, error: nil, connectionBroken: false, at: now)
        let later = health.changed(from: .streaming, to: .error, error: "gone", connectionBroken: false, at: now)
        #expect(later == .fault("the server reported an error: gone"))
        #expect(!health.shouldRelink(at: now + .seconds(10)))
    }
}

/// What the engine's one timer waits for: each deadline the policies name, and none when nothing is due.
extension PipeWirePolicyTests {
    @Test("stream health: the timer waits for the relink at 3 s, then the fault's deadline; nothing once started")
    func healthDeadlines() {
        var health = StreamHealth(connectedAt: Self.t0)
        #expect(health.nextDeadline == Self.t0 + StreamHealth.relinkAfter)
        var relinked = health.relinked(at: Self.t0 + .seconds(3))
        // The fault counts from the first node, the relink from this one.
        #expect(relinked.nextDeadline == Self.t0 + StreamHealth.streamingDeadline + .milliseconds(1))
        #expect(relinked.check(at: Self.t0 + .seconds(3) + .milliseconds(1)) != nil)
        #expect(relinked.nextDeadline == Self.t0 + .seconds(6))
        _ = health.changed(from: .connecting, to: .streaming, error: nil, connectionBroken: false, at: Self.t0)
        #expect(health.nextDeadline == nil)
        for _ in 0..<StreamHealth.maximumRelinks { relinked = relinked.relinked(at: Self.t0 + .seconds(9)) }
        #expect(relinked.nextDeadline == nil, "no relink left and the fault reported: nothing to wait for")
    }

    @Test("reconnect: the timer waits for the next attempt, and for nothing once reconnected")
    func reconnectDeadline() {
        var policy = ReconnectPolicy()
        #expect(policy.nextAttempt == nil)
        policy.lost(at: Self.t0)
        #expect(policy.nextAttempt == Self.t0)
        policy.tornDown(at: Self.t0)
        #expect(policy.nextAttempt == Self.t0 + .milliseconds(100))
        policy.attemptFailed(at: Self.t0 + .milliseconds(100))
        #expect(policy.nextAttempt == Self.t0 + .milliseconds(250))
        _ = policy.attemptSucceeded(at: Self.t0 + .milliseconds(250))
        #expect(policy.nextAttempt == nil)
    }

    @Test("quantum: read every 20 ms for 1 s after an event, every 2 s otherwise, never with nothing playing")
    func quantumWatch() {
        var watch = QuantumWatch()
        #expect(watch.nextRead(after: Self.t0, playing: false) == nil)
        #expect(watch.read(0, at: Self.t0) == nil, "no cycle yet")
        #expect(watch.nextRead(after: Self.t0, playing: true) == Self.t0 + .seconds(2))
        watch.expectChange(at: Self.t0)
        #expect(watch.nextRead(after: Self.t0, playing: true) == Self.t0 + .milliseconds(20))
        #expect(watch.read(1024, at: Self.t0 + .milliseconds(20)) == .quantumChanged(frames: 1024))
        #expect(watch.read(1024, at: Self.t0 + .milliseconds(40)) == nil, "reported once")
        #expect(watch.nextRead(after: Self.t0 + .milliseconds(40), playing: true) == Self.t0 + .milliseconds(60))
        #expect(watch.read(4096, at: Self.t0 + .seconds(1)) == .quantumChanged(frames: 4096))
        #expect(watch.nextRead(after: Self.t0 + .seconds(1), playing: true) == Self.t0 + .seconds(3))
    }
}
