/// What a bridge from `OverlayAudioDelegate` calls to leases leases from: the in-process session under
/// the bridge's owner name (``OverlayAudioBridge``), or a unit's connection to a session in another
/// process (SharedSessionRemote's `RemoteOverlayDelegate`). The two bridges keep the same rules through
/// one implementation, `OverlayLeaseStacks`; `package`, as only the package's own bridges need it.
package protocol OverlayLeaseSource: Sendable {
    /// A session lease, as the source grants it.
    associatedtype SessionHold: Sendable
    /// A duck lease, as the source grants it.
    associatedtype DuckHold: Sendable

    /// A session of `type`.
    func acquire(_ type: AudioSessionType) throws(SessionError) -> SessionHold
    /// A duck at the policy's level, or `nil` if it was not granted (the delegate call that asks for it
    /// cannot throw).
    func duck() -> DuckHold?
    /// A duck that lowers the main video only while `source` is active.
    func duck(following source: ActivitySource) throws(SessionError) -> DuckHold
    /// Gives a session lease back.
    func release(session lease: SessionHold)
    /// Gives a duck lease back.
    func release(duck lease: DuckHold)
    /// Records a disable call with nothing to release (`what` names it) as a `releaseIgnored` event.
    func ignoredRelease(_ what: String)
}

/// The leases a bridge holds for its unit: a stack of session leases per type and one of ducks. Each
/// prepare or request call pushes, the matching disable call releases the most recent of its kind, and
/// a disable call with nothing to release is recorded as ignored.
package final class OverlayLeaseStacks<Source: OverlayLeaseSource>: Sendable {
    /// Where the leases come from.
    package let source: Source

    private struct Held {
        var sessions: [AudioSessionType: [Source.SessionHold]] = [:]
        var ducks: [Source.DuckHold] = []
    }

    private let held = Locked(Held())

    package init(_ source: Source) { self.source = source }

    package func requestAudioDucking() {
        guard let lease = source.duck() else { return }
        held.withLock { $0.ducks.append(lease) }
    }

    package func requestVoiceActivityDucking(following activity: ActivitySource) throws(SessionError) {
        let lease = try source.duck(following: activity)
        held.withLock { $0.ducks.append(lease) }
    }

    package func disableAudioDucking() {
        // Release outside the lock: the source delivers events to delegates that may call back into
        // this bridge.
        if let lease = held.withLock({ $0.ducks.popLast() }) {
            source.release(duck: lease)
        } else {
            source.ignoredRelease("disableAudioDucking() without a duck")
        }
    }

    package func prepareAudioSession(for type: AudioSessionType) throws(SessionError) {
        let lease = try source.acquire(type)
        held.withLock { $0.sessions[type, default: []].append(lease) }
    }

    package func disableAudioSession(for type: AudioSessionType) {
        if let lease = held.withLock({ $0.sessions[type]?.popLast() }) {
            source.release(session: lease)
        } else {
            source.ignoredRelease("disableAudioSession(for: .\(type)) without a prepared \(type) session")
        }
    }

    /// Releases everything held, the ducks first (most recent first), then the sessions; returns how
    /// many of each it released.
    package func releaseAll() -> (sessions: Int, ducks: Int) {
        let (sessions, ducks) = held.withLock { held in
            defer { held = Held() }
            return (held.sessions.values.flatMap { $0 }, held.ducks)
        }
        for duck in ducks.reversed() { source.release(duck: duck) }
        for lease in sessions.reversed() { source.release(session: lease) }
        return (sessions.count, ducks.count)
    }

    /// How many sessions of each type and ducks are held.
    package var heldCounts: (generic: Int, voice: Int, ducks: Int) {
        held.withLock { ($0.sessions[.generic]?.count ?? 0, $0.sessions[.voice]?.count ?? 0, $0.ducks.count) }
    }
}
