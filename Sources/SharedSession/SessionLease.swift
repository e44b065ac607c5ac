import Synchronization

/// A held session of one type, given by ``SharedSession/acquire(_:owner:)``.
///
/// Give it back with ``release()``. A second release does nothing but log a warning and send a
/// `releaseIgnored` event: it never takes anyone else's share. A lease dropped without release (its
/// owner went away) is released when it is deinitialised, with a `leaseDropped` event naming the owner.
public final class SessionLease: Sendable, CustomStringConvertible {
    /// The lease's id, as the snapshot lists it.
    public let id: LeaseID
    /// Generic or voice.
    public let type: AudioSessionType
    /// Who holds it.
    public let owner: String
    private let gate: ReleaseGate

    init(id: LeaseID, type: AudioSessionType, owner: String, session: SharedSession) {
        self.id = id
        self.type = type
        self.owner = owner
        self.gate = ReleaseGate(
            release: { dropped in session.releaseLease(id, owner: owner, dropped: dropped) },
            repeated: {
                session.ignoredRelease(
                    owner: owner, what: "\(type) \(id) released twice", cause: .sessionLease(id, owner: owner))
            })
    }

    /// Whether the lease is still held.
    public var isHeld: Bool { gate.isOpen }

    /// Gives the session back. Safe to call from any thread, and more than once.
    public func release() { gate.release() }

    deinit { gate.drop() }

    public var description: String { "SessionLease(\(type) \(id) of \(owner)\(isHeld ? "" : ", released"))" }
}

/// A held duck or pause request, given by ``SharedSession/duck(owner:)`` or
/// ``SharedSession/pauseMain(owner:)``.
///
/// Ducks release in any order; the last one restores the host's current volume. The same release
/// rules as ``SessionLease`` apply.
public final class DuckLease: Sendable, CustomStringConvertible {
    /// The lease's id, as the snapshot lists it.
    public let id: LeaseID
    /// What it asks of the main stream.
    public let style: DuckStyle
    /// Who holds it.
    public let owner: String
    private let gate: ReleaseGate

    init(id: LeaseID, style: DuckStyle, owner: String, session: SharedSession) {
        self.id = id
        self.style = style
        self.owner = owner
        self.gate = ReleaseGate(
            release: { dropped in session.releaseDuck(id, owner: owner, dropped: dropped) },
            repeated: {
                session.ignoredRelease(
                    owner: owner, what: "\(style) \(id) released twice", cause: .duckLease(id, owner: owner))
            })
    }

    /// Whether the lease is still held.
    public var isHeld: Bool { gate.isOpen }

    /// Ends the request. Safe to call from any thread, and more than once.
    public func release() { gate.release() }

    deinit { gate.drop() }

    public var description: String { "DuckLease(\(style) \(id) of \(owner)\(isHeld ? "" : ", released"))" }
}

/// An open stream of the session, given by ``SharedSession/openMainStream(_:source:)`` or
/// ``SharedSession/openStream(_:source:volume:)``. The stream stays open until ``close()`` or until
/// the session closes.
public final class StreamHandle: Sendable, CustomStringConvertible {
    /// The stream's id.
    public let id: StreamID
    /// How the stream presents itself.
    public let descriptor: StreamDescriptor
    /// Whether it is the main video-audio stream.
    public let isMain: Bool
    private let session: SharedSession

    init(id: StreamID, descriptor: StreamDescriptor, isMain: Bool, session: SharedSession) {
        self.id = id
        self.descriptor = descriptor
        self.isMain = isMain
        self.session = session
    }

    /// Sets the stream's own volume (for the main stream: the host's ``SharedSession/mainVolume``).
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` outside 0 through 1, or `unknownStream`
    ///   if the stream was closed.
    public func setVolume(_ volume: Float) throws(SessionError) {
        try session.setStreamVolume(id, volume)
    }

    /// Closes the stream. Closing twice does nothing.
    public func close() {
        session.closeStream(id)
    }

    public var description: String { "StreamHandle(\(id) \(descriptor.name))" }
}

/// The exactly-once release both lease kinds share: the first `release()` or the deinit gives the
/// lease back; a later `release()` is reported as ignored.
private final class ReleaseGate: Sendable {
    private let released = Atomic<Bool>(false)
    private let onRelease: @Sendable (_ dropped: Bool) -> Void
    private let onRepeat: @Sendable () -> Void

    init(release: @escaping @Sendable (_ dropped: Bool) -> Void, repeated: @escaping @Sendable () -> Void) {
        self.onRelease = release
        self.onRepeat = repeated
    }

    var isOpen: Bool { !released.load(ordering: .acquiring) }

    func release() {
        if released.exchange(true, ordering: .acquiringAndReleasing) {
            onRepeat()
        } else {
            onRelease(false)
        }
    }

    /// The lease's owner let go of it without releasing.
    func drop() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { onRelease(true) }
    }
}
