import Foundation
import SharedSession
import SharedSessionTesting
import Testing

@Suite("EventLog")
struct EventLogTests {
    /// Whether `condition` came true within 5 s, checked between yields to the other tasks (no sleep).
    static func waitUntil(_ condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + .seconds(5)
        while !condition() {
            guard ContinuousClock.now < end else { return false }
            await Task.yield()
        }
        return true
    }

    @Test("wait returns an event already logged at once, and one that arrives later from another task")
    func waitFindsPastAndFutureEvents() async {
        let log = EventLog<Int>()
        log.append(1)
        #expect(await log.wait { $0 == 1 } == 1)
        // The feeder appends only once the wait below is suspended, so the event does arrive later.
        let feeder = Task {
            let began = await Self.waitUntil { log.pendingWaits == 1 }
            log.append(2)
            log.append(3)
            return began
        }
        #expect(await log.wait(timeout: .seconds(5)) { $0 >= 3 } == 3)
        #expect(await feeder.value, "the wait never suspended")
        #expect(log.pendingWaits == 0)
        #expect(log.all == [1, 2, 3])
        #expect(log.filter { $0 > 1 } == [2, 3])
        #expect(log.count == 3)
    }

    // The time limit catches a wait that never gives up; how much later than its timeout it returns
    // depends on the cooperative pool, which the CPU-heavy suites running beside it can keep busy: on 2
    // cores, one CI run took 317 s from the test's start to its end. The limit is above the whole pass.
    @Test("wait gives up with nil once the timeout has passed", .timeLimit(.minutes(20)))
    func waitTimesOut() async {
        let log = EventLog<Int>()
        let start = ContinuousClock.now
        #expect(await log.wait(timeout: .milliseconds(50)) { $0 == 1 } == nil)
        #expect(ContinuousClock.now - start >= .milliseconds(50))
    }

    @Test("wait after a mark ignores what came before it")
    func waitAfterMark() async {
        let log = EventLog<String>()
        log.append("ducked")
        let mark = log.count
        #expect(await log.wait(timeout: .milliseconds(20), after: mark, for: { $0 == "ducked" }) == nil)
        log.append("ducked")
        #expect(await log.wait(timeout: .seconds(1), after: mark, for: { $0 == "ducked" }) == "ducked")
    }

    @Test("a cancelled wait returns nil")
    func cancelledWait() async {
        let log = EventLog<Int>()
        let waiter = Task { await log.wait(timeout: .seconds(30)) { $0 == 1 } }
        // Cancelled once suspended: the cancellation handler, not the check before suspending, ends it.
        #expect(await Self.waitUntil { log.pendingWaits == 1 }, "the wait never suspended")
        let start = ContinuousClock.now
        waiter.cancel()
        #expect(await waiter.value == nil)
        #expect(ContinuousClock.now - start < .seconds(5), "returned on cancellation, not at its 30 s timeout")
        #expect(log.pendingWaits == 0)
    }

    @Test("a log of a session receives its events in order and waits for a kind")
    func sessionLog() async throws {
        let session = SharedSession(engine: RecordingEngine())
        let log = EventLog(session: session)
        let lease = try session.acquire(.generic, owner: "feed")
        let duck = session.duck(owner: "feed")
        let ducked = await log.wait { $0.kind == .mainGainChanged(from: 1, to: 0.1) }
        #expect(ducked?.cause == .duckLease(try #require(duck.id), owner: "feed"))
        let mark = log.count
        duck.release()
        lease.release()
        #expect(await log.wait(for: .deactivated(notifiedOthers: true), after: mark) != nil)
        session.close()
        #expect(await log.wait(for: .closed) != nil)
        #expect(log.kinds.contains(.activated(.generic)))
        #expect(log.kinds.last == .closed)
    }
}
