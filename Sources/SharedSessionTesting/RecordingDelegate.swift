public import SharedSession
import Synchronization

/// A `SharedSessionDelegate` that keeps every event and counts the specific hooks, for tests.
public final class RecordingDelegate: SharedSessionDelegate {
    private struct Storage {
        var events: [SessionEvent] = []
        var interruptionsBegan = 0
        var interruptionsEnded: [Bool] = []
        var routeChanges: [RouteChange] = []
    }

    private let storage = Locked(Storage())

    /// Creates an empty recorder.
    public init() {}

    /// Every event received, in order.
    public var events: [SessionEvent] { storage.withLock { $0.events } }
    /// The kinds of every event received, in order.
    public var kinds: [SessionEvent.Kind] { storage.withLock { $0.events.map(\.kind) } }
    /// How many times `sessionInterruptionBegan` was called.
    public var interruptionsBegan: Int { storage.withLock { $0.interruptionsBegan } }
    /// The `shouldResume` of every `sessionInterruptionEnded` call.
    public var interruptionsEnded: [Bool] { storage.withLock { $0.interruptionsEnded } }
    /// Every route change received.
    public var routeChanges: [RouteChange] { storage.withLock { $0.routeChanges } }
    /// Forgets everything received so far.
    public func removeAll() { storage.withLock { $0 = Storage() } }

    public func session(_ session: SharedSession, didEmit event: SessionEvent) {
        storage.withLock { $0.events.append(event) }
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
