import Synchronization

/// The ready host-side ``OverlayAudioDelegate``: turns an SDK's calls into leases on a
/// ``SharedSession``.
///
/// Each `prepareAudioSession(for:)` holds a session lease and each `requestAudioDucking()` a duck
/// lease, owned by the bridge's `owner` name; the matching disable call releases the most recent one of
/// its kind. Unbalanced disable calls are ignored with a warning and a `releaseIgnored` event. When
/// the bridge is deinitialised, whatever it still holds is released, so an SDK torn down mid-clip
/// leaves no duck behind.
public final class OverlayAudioBridge: OverlayAudioDelegate, Sendable {
    /// The session the bridge leases from.
    public let session: SharedSession
    /// The name the bridge's leases carry in snapshots and events.
    public let owner: String

    private struct Held {
        var sessions: [AudioSessionType: [SessionLease]] = [:]
        var ducks: [DuckLease] = []
    }

    private let held = Locked(Held())

    /// Creates a bridge that leases from `session` as `owner` (an SDK's or unit's name).
    public init(session: SharedSession, owner: String) {
        self.session = session
        self.owner = owner
    }

    public func requestAudioDucking() {
        let lease = session.duck(owner: owner)
        held.withLock { $0.ducks.append(lease) }
    }

    public func disableAudioDucking() {
        // Release outside the bridge's lock: the session delivers events to delegates that may call
        // back into this bridge.
        if let lease = held.withLock({ $0.ducks.popLast() }) {
            lease.release()
        } else {
            session.ignoredRelease(
                owner: owner, what: "disableAudioDucking() without a duck", cause: .unit(owner: owner))
        }
    }

    public func prepareAudioSession(for type: AudioSessionType) throws {
        let lease = try session.acquire(type, owner: owner)
        held.withLock { $0.sessions[type, default: []].append(lease) }
    }

    public func disableAudioSession(for type: AudioSessionType) {
        if let lease = held.withLock({ $0.sessions[type]?.popLast() }) {
            lease.release()
        } else {
            session.ignoredRelease(
                owner: owner, what: "disableAudioSession(for: .\(type)) without a prepared \(type) session",
                cause: .unit(owner: owner))
        }
    }

    /// How many sessions of each type and ducks the bridge holds.
    public var heldCounts: (generic: Int, voice: Int, ducks: Int) {
        held.withLock { ($0.sessions[.generic]?.count ?? 0, $0.sessions[.voice]?.count ?? 0, $0.ducks.count) }
    }
}
