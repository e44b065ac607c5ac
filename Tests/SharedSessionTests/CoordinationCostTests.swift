import CRealtimeProbe
import SharedSession
import Testing

/// Leasing and ducking allocate only the lease object the caller gets back: no effect lists, event
/// queues, closures or dictionary copies per call when no one listens for events (issue 7, figure 5).
/// Counted by the probe in Tests/CRealtimeProbe around 1,000 pairs, on a session that already made
/// ten pairs (warm-up: the buffers it keeps reach their size). In the real-time suite, whose probe
/// conditions (and whose absence from the ThreadSanitizer pass of Scripts/test) they share.
extension RealtimeRenderTests {
    static let pairs = 1_000

    #if DEBUG
        // Unoptimised code allocates more than the lease: the frames of the standard library's
        // modify coroutines and temporaries the optimiser removes. The counts are exact and the same
        // however many leases are held (measured: 2 and 6 per pair since the state was split into its
        // parts (issue 14), which read the main stream without a search; 8 and 11 before; before
        // issue 7's work, 18 and 12 in release). A bound, so any new allocation per call fails here.
        static let perAcquirePair: Int64 = 2
        static let perDuckPair: Int64 = 6
    #else
        // Optimised (as `swift build -c release` and the benchmark build it): the lease object only.
        static let perAcquirePair: Int64 = 1
        static let perDuckPair: Int64 = 1
    #endif

    /// The allocations of `pairs` runs of `body` on this thread, after 10 runs of warm-up.
    static func allocations(_ body: () throws -> Void) throws -> (allocations: Int64, lastCall: String) {
        for _ in 0..<10 { try body() }
        CRealtimeProbe_reset()
        CRealtimeProbe_armCurrentThread()
        for _ in 0..<pairs { try body() }
        CRealtimeProbe_disarmCurrentThread()
        return (CRealtimeProbe_read().allocations, String(cString: CRealtimeProbe_lastCall()))
    }

    @Test("an acquire+release pair allocates only its lease, however many leases are held", arguments: [1, 100])
    func acquireAllocatesOnlyTheLease(held: Int) throws {
        try Probe.require()
        let (session, main, leases) = try CoordinationTests.session(held: held)
        let counted = try Self.allocations {
            try session.acquire(.generic, owner: "bench").release()
        }
        print("[measure] acquire+release, \(held) held: \(counted.allocations) allocations in \(Self.pairs) pairs")
        #expect(
            counted.allocations <= Self.perAcquirePair * Int64(Self.pairs), "last counted call: \(counted.lastCall)")
        #expect(session.snapshot.leases.count == held)
        _ = (main, leases)
    }

    @Test("a duck+release pair allocates only its lease, and the main stream comes back", arguments: [1, 100])
    func duckAllocatesOnlyTheLease(held: Int) throws {
        try Probe.require()
        let (session, main, leases) = try CoordinationTests.session(held: held)
        let counted = try Self.allocations {
            session.duck(owner: "bench").release()
        }
        print("[measure] duck+release, \(held) held: \(counted.allocations) allocations in \(Self.pairs) pairs")
        #expect(counted.allocations <= Self.perDuckPair * Int64(Self.pairs), "last counted call: \(counted.lastCall)")
        #expect(session.snapshot.mainGain == 1)
        #expect(session.snapshot.ducks.isEmpty)
        _ = (main, leases)
    }
}

/// Events are built and queued only when someone receives them; with a subscriber they all arrive.
@Suite("Coordination")
struct CoordinationTests {
    /// A session over the offline engine with the main stream open and `held` generic leases.
    static func session(held: Int) throws -> (SharedSession, StreamHandle, [SessionLease]) {
        let session = SharedSession(engine: OfflineEngine())
        let main = try session.openMainStream(source: SineSource(frequency: 440, amplitude: 0.5))
        let leases = try (0..<held).map { try session.acquire(.generic, owner: "holder \($0)") }
        return (session, main, leases)
    }

    @Test("with a subscriber attached the events still arrive, in order")
    func subscriberStillGetsEveryEvent() async throws {
        let (session, main, leases) = try Self.session(held: 1)
        // Pairs made before anyone subscribes build no events; the subscriber gets its own pairs'.
        try session.acquire(.generic, owner: "before").release()
        session.duck(owner: "before").release()
        let events = session.events
        try session.acquire(.generic, owner: "bench").release()
        session.duck(owner: "bench").release()
        session.close()
        var kinds: [String] = []
        for await event in events {
            switch event.kind {
            case .leaseAcquired(let info) where info.owner != "holder 0": kinds.append("acquired \(info.owner)")
            case .leaseReleased(let info) where info.owner != "holder 0": kinds.append("released \(info.owner)")
            case .duckAcquired(let info): kinds.append("duck \(info.owner)")
            case .duckReleased(let info): kinds.append("unduck \(info.owner)")
            case .mainGainChanged: kinds.append("gain")
            case .closed: kinds.append("closed")
            default: break
            }
        }
        #expect(
            kinds == ["acquired bench", "released bench", "duck bench", "gain", "unduck bench", "gain", "closed"])
        _ = (main, leases)
    }
}
