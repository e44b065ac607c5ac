import Testing

@testable import SharedSession

/// What a developer sees with `print`: snapshots as a short block, events, leases and errors on one
/// line each; `debugDescription` keeps every field.
@Suite("Readable descriptions")
struct DescriptionTests {
    @Test("print(snapshot) is a short block: configuration, leases, ducks, the main gain, the system, streams")
    func snapshotBlock() throws {
        let t0 = ContinuousClock.now
        var state = SessionState(policy: .default)
        _ = state.apply(
            .openStream(StreamDescriptor(name: "movie", role: .movie), owner: nil, volume: 1, isMain: true), at: t0)
        _ = state.apply(.acquire(.generic, owner: "player"), at: t0)
        _ = state.apply(.activationOutcome(.generic, refused: nil), at: t0)
        _ = state.apply(.setMainVolume(0.8), at: t0)
        _ = state.apply(.duck(DuckRequest(owner: "feed")), at: t0 + .milliseconds(500))
        _ = state.apply(.system(.interruptionBegan), at: t0)
        let snapshot = state.snapshot(at: t0 + .milliseconds(1500))
        #expect(
            snapshot.description == """
                SessionSnapshot
                  configuration: \(SessionConfiguration.generic)
                  leases: generic lease#1 of player, held 1.500 s
                  ducks: duck lease#2 of feed, held 1.000 s
                  main: volume 0.800 × duck 0.100 = gain 0.080, playing
                  interruption: interrupted, foreground, rendering suspended
                  engine: connected
                  streams: stream#1 movie gain 0.080
                """)
        #expect(snapshot.debugDescription.hasPrefix("SessionSnapshot(activeConfiguration: Optional("))
        #expect(snapshot.debugDescription.contains("takenAt: "))
    }

    @Test("events, leases and errors print on one line, naming what, whose and why")
    func oneLiners() throws {
        let session = SharedSession(engine: OfflineEngine())
        let lease = try session.acquire(.generic, owner: "feed")
        #expect("\(lease)" == "SessionLease(generic lease#1 of feed)")
        let duck = session.duck(owner: "feed")
        #expect("\(duck)" == "DuckLease(duck lease#2 of feed)")
        let event = SessionEvent(
            .mainGainChanged(from: 1, to: 0.1), cause: .duckLease(try #require(duck.id), owner: "feed"))
        #expect("\(event)" == "mainGainChanged(from: 1.0, to: 0.1) (cause: duck lease#2 of feed)")
        let error = SessionError(code: .unknownStream, message: "stream#9 is not open")
        #expect("\(error)" == "SessionError.unknownStream: stream#9 is not open")
        #expect("\(InterruptionPhase.endedWaitingForHost)" == "ended, waiting for the host to play")
    }
}
