public import SharedSession

/// The `OverlayAudioDelegate` contract over a ``RemoteSession``: an SDK written against the
/// delegate protocol works out of process without a change.
///
/// It keeps the rules of the in-process `OverlayAudioBridge`: each `prepareAudioSession(for:)` holds
/// a session lease and each `requestAudioDucking()` a duck lease on the host, under the connection's
/// owner name; a disable call releases the most recent of its kind; an unbalanced disable is ignored
/// (the host records a `releaseIgnored` event). Each call returns once the host applied it. If the
/// connection is lost, `prepareAudioSession(for:)` throws and the other calls do nothing: the host
/// gave everything back when the connection closed.
public final class RemoteOverlayDelegate: OverlayAudioDelegate, Sendable {
    /// The connection it calls through.
    public let session: RemoteSession

    private struct Held {
        var sessions: [AudioSessionType: [RemoteLease]] = [:]
        var ducks: [RemoteLease] = []
    }

    private let held = Locked(Held())

    init(session: RemoteSession) { self.session = session }

    public func requestAudioDucking() {
        guard let lease = try? session.duck() else { return }
        held.withLock { $0.ducks.append(lease) }
    }

    /// Lowers the main video only while `source` is active, as
    /// `OverlayAudioBridge/requestVoiceActivityDucking(following:)` does; undone by
    /// ``disableAudioDucking()``.
    ///
    /// - Throws: `SessionError` as the host's session throws it (`unknownStream`, `limitExceeded`), or
    ///   `connectionLost`.
    public func requestVoiceActivityDucking(following source: ActivitySource) throws(SessionError) {
        let lease = try session.duck(.followActivity(source, level: nil))
        held.withLock { $0.ducks.append(lease) }
    }

    public func disableAudioDucking() {
        if let lease = held.withLock({ $0.ducks.popLast() }) {
            try? lease.release()
        } else {
            ignored("disableAudioDucking() without a duck")
        }
    }

    public func prepareAudioSession(for type: AudioSessionType) throws {
        let lease = try session.acquire(type)
        held.withLock { $0.sessions[type, default: []].append(lease) }
    }

    public func disableAudioSession(for type: AudioSessionType) {
        if let lease = held.withLock({ $0.sessions[type]?.popLast() }) {
            try? lease.release()
        } else {
            ignored("disableAudioSession(for: .\(type)) without a prepared \(type) session")
        }
    }

    /// How many sessions of each type and ducks the delegate holds.
    public var heldCounts: (generic: Int, voice: Int, ducks: Int) {
        held.withLock { ($0.sessions[.generic]?.count ?? 0, $0.sessions[.voice]?.count ?? 0, $0.ducks.count) }
    }

    private func ignored(_ what: String) {
        let owner = session.owner
        _ = try? session.call(.input(.ignoredRelease(owner: owner, what: what, cause: .unit(owner: owner))))
    }
}
