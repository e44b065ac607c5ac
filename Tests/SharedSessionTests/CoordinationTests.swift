import CRealtimeProbe
import SharedSession
import SharedSessionTestSupport
import Testing

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
        // Held to here: an optimised build ends a value's lifetime at its last use, and `_ =` is none.
        withExtendedLifetime((main, leases)) {}
    }
}
