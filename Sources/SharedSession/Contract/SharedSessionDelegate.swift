/// Receives a session's events synchronously, in order, on the thread that made the change, after
/// the change and with no session lock held (so it may call back into the session).
///
/// The specific hooks are called right after ``session(_:didEmit:)`` for their events. Implement the
/// hooks you need; each has a default that does nothing. Return quickly: the thread
/// that made the change waits for the delivery.
public protocol SharedSessionDelegate: AnyObject, Sendable {
    /// Every event.
    func session(_ session: SharedSession, didEmit event: SessionEvent)
    /// An interruption began: rendering is suspended.
    func sessionInterruptionBegan(_ session: SharedSession)
    /// An interruption ended.
    func sessionInterruptionEnded(_ session: SharedSession, shouldResume: Bool)
    /// The route changed.
    func session(_ session: SharedSession, routeDidChange change: RouteChange)
}

extension SharedSessionDelegate {
    public func session(_ session: SharedSession, didEmit event: SessionEvent) {}

    public func sessionInterruptionBegan(_ session: SharedSession) {}
    public func sessionInterruptionEnded(_ session: SharedSession, shouldResume: Bool) {}
    public func session(_ session: SharedSession, routeDidChange change: RouteChange) {}
}
