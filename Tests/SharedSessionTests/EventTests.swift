import SharedSession
import SharedSessionTesting
import Testing

@Suite("Events carry their reason")
struct EventTests {
    @Test("every volume and state change is an event naming the lease or system event behind it")
    func changesNameTheirCause() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        _ = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        let duck = session.duck(owner: "feed")
        let duckID = try #require(duck.id)
        #expect(
            delegate.events.contains(
                SessionEvent(.mainGainChanged(from: 1, to: 0.1), cause: .duckLease(duckID, owner: "feed"))))
        try session.setMainVolume(0.5)
        #expect(delegate.events.contains(SessionEvent(.mainVolumeChanged(from: 1, to: 0.5), cause: .host)))
        #expect(delegate.events.contains(SessionEvent(.mainGainChanged(from: 0.1, to: 0.05), cause: .host)))
        session.handle(.interruptionBegan)
        #expect(delegate.events.contains(SessionEvent(.renderingSuspended(true), cause: .system(.interruptionBegan))))
        let voice = try session.acquire(.voice, owner: "watch-party")
        #expect(
            delegate.events.contains(
                SessionEvent(.activated(.voice), cause: .sessionLease(voice.id, owner: "watch-party"))))
        duck.release()
        #expect(
            delegate.events.contains(
                SessionEvent(.mainGainChanged(from: 0.05, to: 0.5), cause: .duckLease(duckID, owner: "feed"))))
        voice.release()
        #expect(
            delegate.events.last
                == SessionEvent(
                    .deactivated(notifiedOthers: true), cause: .sessionLease(voice.id, owner: "watch-party")))
    }

    @Test("every subscriber gets every event, in the same order")
    func everySubscriberGetsEverything() async throws {
        let session = SharedSession(engine: RecordingEngine())
        let delegate = RecordingDelegate()
        session.delegate = delegate
        let first = session.events
        let second = session.events
        let lease = try session.acquire(.generic, owner: "feed")
        let duck = session.duck(owner: "feed")
        duck.release()
        lease.release()
        session.close()
        var a: [SessionEvent] = []
        var b: [SessionEvent] = []
        for await event in first { a.append(event) }
        for await event in second { b.append(event) }
        // Every event: each subscriber's are the delegate's, which sees each event the session emits.
        #expect(a == delegate.events)
        #expect(b == delegate.events)
        #expect(a.count >= 7)
        #expect(a.last?.kind == .closed)
    }

    @Test("engine faults, connection loss and reconnection are events and keep every lease")
    func engineFaultsKeepLeases() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        let main = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        let lease = try session.acquire(.voice, owner: "watch-party")
        let duck = session.duck(owner: "watch-party")
        engine.emit(.connectionLost(reason: "EPIPE"))
        #expect(!session.snapshot.isEngineConnected)
        engine.emit(.reconnected(attempts: 3, downtime: .milliseconds(300)))
        #expect(session.snapshot.isEngineConnected)
        #expect(session.snapshot.leases.count == 1)
        #expect(session.snapshot.isDucked)
        #expect(engine.gains[main.id] == 0.1)
        engine.emit(.streamFault(stream: main.id, reason: "paused by the server"))
        engine.emit(.externalVolumeChange(stream: main.id, volume: 0.4))
        #expect(session.snapshot.mainVolume == 0.4)
        #expect(abs(session.snapshot.mainGain - 0.04) < 1e-6)
        let kinds = delegate.kinds
        #expect(kinds.contains(.connectionLost(reason: "EPIPE")))
        #expect(kinds.contains(.reconnected(attempts: 3, downtime: .milliseconds(300))))
        #expect(kinds.contains(.streamFault(main.id, reason: "paused by the server")))
        duck.release()
        lease.release()
    }
}
