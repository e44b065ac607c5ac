public import SharedSession

/// The `OverlayAudioDelegate` contract over a ``RemoteSession``: an SDK written against the
/// delegate protocol works out of process without a change.
///
/// It is the in-process `OverlayAudioBridge`'s lease stacks over the connection: each
/// `prepareAudioSession(for:)` holds a session lease and each `requestAudioDucking()` a duck lease on
/// the host, under the connection's owner name; a disable call releases the most recent of its kind; an
/// unbalanced disable is ignored (the host records a `releaseIgnored` event). Each call returns once the
/// host applied it; on a NIO event loop thread, where nothing may wait, the disable calls send their
/// releases without waiting and the others are refused. If the connection is lost,
/// `prepareAudioSession(for:)` throws and the other calls do nothing: the host gave everything back
/// when the connection closed.
public final class RemoteOverlayDelegate: OverlayAudioDelegate, Sendable {
    /// The connection it calls through.
    public let session: RemoteSession

    private let stacks: OverlayLeaseStacks<RemoteLeaseSource>

    init(session: RemoteSession) {
        self.session = session
        stacks = OverlayLeaseStacks(RemoteLeaseSource(session: session))
    }

    public func requestAudioDucking() { stacks.requestAudioDucking() }

    /// Lowers the main video only while `source` is active, as
    /// `OverlayAudioBridge/requestVoiceActivityDucking(following:)` does; undone by
    /// ``disableAudioDucking()``.
    ///
    /// - Throws: `SessionError` as the host's session throws it (`unknownStream`, `limitExceeded`), or
    ///   `connectionLost`.
    public func requestVoiceActivityDucking(following source: ActivitySource) throws(SessionError) {
        try stacks.requestVoiceActivityDucking(following: source)
    }

    public func disableAudioDucking() { stacks.disableAudioDucking() }

    public func prepareAudioSession(for type: AudioSessionType) throws {
        try stacks.prepareAudioSession(for: type)
    }

    public func disableAudioSession(for type: AudioSessionType) { stacks.disableAudioSession(for: type) }

    /// How many sessions of each type and ducks the delegate holds.
    public var heldCounts: (generic: Int, voice: Int, ducks: Int) { stacks.heldCounts }
}

/// A unit's connection, as the lease stacks lease from it.
struct RemoteLeaseSource: OverlayLeaseSource {
    let session: RemoteSession

    func acquire(_ type: AudioSessionType) throws(SessionError) -> RemoteLease { try session.acquire(type) }

    func duck() -> RemoteLease? { try? session.duck() }

    func duck(following source: ActivitySource) throws(SessionError) -> RemoteLease {
        try session.duck(.followActivity(source, level: nil))
    }

    func release(session lease: RemoteLease) { release(lease) }

    func release(duck lease: RemoteLease) { release(lease) }

    func ignoredRelease(_ what: String) {
        let request = UnitRequest.ignoredRelease(owner: session.owner, what: what)
        if RemoteSession.isOnEventLoop {
            session.post(request)
        } else {
            _ = try? session.call(request)
        }
    }

    /// A disable call cannot throw: on an event loop the release goes without waiting; a lost
    /// connection already gave the lease back.
    private func release(_ lease: RemoteLease) {
        if RemoteSession.isOnEventLoop {
            lease.releaseWithoutWaiting()
        } else {
            try? lease.release()
        }
    }
}
