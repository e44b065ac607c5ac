public import SharedSession
import Synchronization

/// A `SharedSessionDelegate` that keeps every event and counts the specific hooks, for tests.
///
/// Its events go to an ``EventLog`` (``log``), so a test can wait for one with a timeout as well as
/// read them all.
public final class RecordingDelegate: SharedSessionDelegate {
    private struct Storage {
        var interruptionsBegan = 0
        var interruptionsEnded: [Bool] = []
        var routeChanges: [RouteChange] = []
    }

    private let storage = Locked(Storage())

    /// Creates an empty recorder.
    public init() {}

    /// Every event received through `session(_:didEmit:)`, in order, with a wait for the next one.
    public let log = EventLog<SessionEvent>()
    /// Every event received, in order.
    public var events: [SessionEvent] { log.all }
    /// The kinds of every event received, in order.
    public var kinds: [SessionEvent.Kind] { log.all.map(\.kind) }
    /// How many times `sessionInterruptionBegan` was called.
    public var interruptionsBegan: Int { storage.withLock { $0.interruptionsBegan } }
    /// The `shouldResume` of every `sessionInterruptionEnded` call.
    public var interruptionsEnded: [Bool] { storage.withLock { $0.interruptionsEnded } }
    /// Every route change received.
    public var routeChanges: [RouteChange] { storage.withLock { $0.routeChanges } }
    /// Forgets everything received so far.
    public func removeAll() {
        storage.withLock { $0 = Storage() }
        log.removeAll()
    }

    public func session(_ session: SharedSession, didEmit event: SessionEvent) {
        log.append(event)
    }

    public func sessionInterruptionBegan(_ session: SharedSession) {
        storage.withLock { $0.interruptionsBegan += 1 }
    }

    public func sessionInterruptionEnded(_ session: SharedSession, shouldResume: Bool) {
        storage.withLock { $0.interruptionsEnded.append(shouldResume) }
    }

    public func session(_ session: SharedSession, routeDidChange change: RouteChange) {
        storage.withLock { $0.routeChanges.append(change) }
    }
}
