import Dispatch

/// The ready host-side ``OverlayAudioDelegate``: turns an SDK's calls into leases on a
/// ``SharedSession``.
///
/// Each `prepareAudioSession(for:)` holds a session lease and each `requestAudioDucking()` a duck
/// lease, owned by the bridge's `owner` name; the matching disable call releases the most recent one of
/// its kind. Unbalanced disable calls are ignored with a warning and a `releaseIgnored` event. When
/// the bridge is deinitialised, whatever it still holds is released, so an SDK torn down mid-clip
/// leaves no duck behind; ``tearDown(reason:)`` does the same while the host keeps the bridge, and
/// ``watch(_:every:)`` does it when the SDK object the bridge serves goes away.
///
/// Beyond the StreamLayer contract, an SDK with a voice chat can ask for the movie to be ducked only
/// while someone speaks: ``requestVoiceActivityDucking(following:)``.
public final class OverlayAudioBridge: OverlayAudioDelegate, Sendable {
    /// The session the bridge leases from.
    public let session: SharedSession
    /// The name the bridge's leases carry in snapshots and events.
    public let owner: String

    private let stacks: OverlayLeaseStacks<SessionLeaseSource>

    /// Creates a bridge that leases from `session` as `owner` (an SDK's or unit's name).
    public init(session: SharedSession, owner: String) {
        self.session = session
        self.owner = owner
        stacks = OverlayLeaseStacks(SessionLeaseSource(session: session, owner: owner))
    }

    public func requestAudioDucking() { stacks.requestAudioDucking() }

    /// Lowers the main video only while `source` is active (the far end's voice stream, or the
    /// microphone): in the pauses between sentences it comes back (``VoiceActivityPolicy``). Undone,
    /// like any duck, by ``disableAudioDucking()``.
    ///
    /// - Throws: ``SessionError`` with code `unknownStream` if the stream is not open, or
    ///   `limitExceeded` if the unit's limits refuse it.
    public func requestVoiceActivityDucking(following source: ActivitySource) throws(SessionError) {
        try stacks.requestVoiceActivityDucking(following: source)
    }

    public func disableAudioDucking() { stacks.disableAudioDucking() }

    public func prepareAudioSession(for type: AudioSessionType) throws {
        try stacks.prepareAudioSession(for: type)
    }

    public func disableAudioSession(for type: AudioSessionType) { stacks.disableAudioSession(for: type) }

    /// Gives back everything the unit holds (its sessions and ducks), with a `unitReleased` event
    /// naming `reason`: the host tore the unit down, or its SDK object went away. The bridge stays
    /// usable: a later call from the unit leases anew.
    public func tearDown(reason: String = "torn down by the host") {
        let (sessions, ducks) = stacks.releaseAll()
        session.unitReleased(owner: owner, reason: reason, sessions: sessions, ducks: ducks)
    }

    /// Watches the SDK object this bridge serves, which the SDK or the host may let go of without
    /// undoing its requests: once `unit` is deallocated, the bridge tears down with a `unitReleased`
    /// event. Checked every `interval` (250 ms by default) off the caller's thread; the bridge is held
    /// weakly meanwhile.
    public func watch(_ unit: AnyObject, every interval: Duration = .milliseconds(250)) {
        Self.check(WeakUnit(unit), name: String(describing: type(of: unit)), bridge: self, every: interval)
    }

    private static func check(_ unit: WeakUnit, name: String, bridge: OverlayAudioBridge, every interval: Duration) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(interval.inNanoseconds))) {
            [weak bridge] in
            guard let bridge else { return }
            if unit.isAlive {
                check(unit, name: name, bridge: bridge, every: interval)
            } else {
                bridge.tearDown(reason: "its SDK object (\(name)) was deallocated")
            }
        }
    }

    /// How many sessions of each type and ducks the bridge holds.
    public var heldCounts: (generic: Int, voice: Int, ducks: Int) { stacks.heldCounts }
}

/// The in-process session under a bridge's owner name, as the lease stacks lease from it.
struct SessionLeaseSource: OverlayLeaseSource {
    let session: SharedSession
    let owner: String

    func acquire(_ type: AudioSessionType) throws(SessionError) -> SessionLease {
        try session.acquire(type, owner: owner)
    }

    func duck() -> DuckLease? {
        let lease = session.duck(owner: owner)
        return lease.isHeld ? lease : nil
    }

    func duck(following source: ActivitySource) throws(SessionError) -> DuckLease {
        try session.duck(DuckRequest(owner: owner, style: .followActivity(source, level: nil)))
    }

    func release(session lease: SessionLease) { lease.release() }

    func release(duck lease: DuckLease) { lease.release() }

    func ignoredRelease(_ what: String) {
        session.ignoredRelease(owner: owner, what: what, cause: .unit(owner: owner))
    }
}

/// A weak reference to a unit's SDK object, for ``OverlayAudioBridge/watch(_:every:)``.
private final class WeakUnit: @unchecked Sendable {
    // @unchecked: `object` is only read (a weak load is atomic in the Swift runtime) after init.
    weak var object: AnyObject?

    init(_ object: AnyObject) { self.object = object }

    var isAlive: Bool { object != nil }
}
