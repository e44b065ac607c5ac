/// What one `pw_stream`'s state changes and volume reports mean, from its connection on: a fault to
/// report (paused by the server, an error, never started), a renegotiation (paused by the server and
/// streaming again at once), a volume a session manager restored, or a volume someone set from outside.
///
/// A plain value kept beside each stream node and fed what its callbacks say; tested without a
/// daemon.
package struct StreamHealth: Sendable, Hashable {
    /// The states of a stream that matter here.
    package enum State: Sendable, Hashable {
        case unconnected, connecting, paused, streaming, error
    }

    /// What a volume report is.
    package enum VolumeReport: Sendable, Hashable {
        /// Our own volume coming back: nothing to do.
        case own
        /// A volume a session manager put on the node as it started: undo it, report nothing.
        case restored
        /// Someone changed the volume from outside: report it, then undo it.
        case external(Float)
    }

    /// What a state change means.
    package enum Report: Sendable, Hashable {
        /// The stream stopped playing without being asked to, or never started.
        case fault(String)
        /// The server paused the stream to set its format or buffers up again (PipeWire 1.x does for a
        /// forced quantum) and it played again after `paused`.
        case renegotiated(paused: Duration)
    }

    /// A stream paused by the server that plays again within this is renegotiating, not faulty:
    /// PipeWire 1.4 pauses every stream for a few milliseconds to set buffers up for a forced quantum
    /// (the Measurements article has the pause).
    package static let renegotiationGrace = Duration.milliseconds(250)
    /// A stream that has not reached STREAMING this long after connecting is reported.
    package static let streamingDeadline = Duration.seconds(3)
    /// Volumes that appear this soon after a stream connected are a session manager restoring a saved
    /// volume, not the user.
    package static let restoreWindow = Duration.seconds(1)
    /// A node that has not started this long after connecting is made again: after a daemon restart
    /// the engine can connect before the session manager can link, which leaves nodes made then
    /// unlinked for good. As long as the never-started deadline, so a node that is only slow to be
    /// linked (WirePlumber busy linking many streams) is never torn down under it.
    package static let relinkAfter = streamingDeadline
    /// How many times a stream's node is made again before the engine gives up on it.
    package static let maximumRelinks = 10
    /// How long after the server put a node into its error state (after a daemon restart, "no node
    /// available" while the session manager has no sink yet) it is made again: it will never start as
    /// it is. Doubled for each node made again since the last that started, up to ``relinkAfter``.
    package static func relinkAfterError(relinks: Int) -> Duration {
        min(relinkAfter, .milliseconds(250) * (1 << min(relinks, 4)))
    }

    /// When this node connected.
    package let connectedAt: ContinuousClock.Instant
    /// When the stream's first node connected: the never-started deadline counts from it, across relinks.
    package let firstConnectedAt: ContinuousClock.Instant
    /// How many nodes were made for the stream before this one, since the last that started.
    package let relinks: Int
    package private(set) var reachedStreaming = false
    private var faultReported = false
    /// When the server put the node into its error state, while it has not started since.
    private var erroredAt: ContinuousClock.Instant?
    /// Whether an error was reported since the stream last played (carried to the nodes made again).
    private var errorReported = false
    /// When the server paused the stream, while it has not played again nor been reported.
    package private(set) var pausedAt: ContinuousClock.Instant?

    package init(connectedAt: ContinuousClock.Instant) {
        self.init(
            connectedAt: connectedAt, firstConnectedAt: connectedAt, relinks: 0, faultReported: false,
            errorReported: false)
    }

    private init(
        connectedAt: ContinuousClock.Instant, firstConnectedAt: ContinuousClock.Instant, relinks: Int,
        faultReported: Bool, errorReported: Bool
    ) {
        self.connectedAt = connectedAt
        self.firstConnectedAt = firstConnectedAt
        self.relinks = relinks
        self.faultReported = faultReported
        self.errorReported = errorReported
    }

    /// Whether the node should be made again at `now`: it has not started within ``relinkAfter``, or
    /// within ``relinkAfterError(relinks:)`` of the server's error, and the stream has relinks left.
    package func shouldRelink(at now: ContinuousClock.Instant) -> Bool {
        guard !reachedStreaming, let due = relinkDue else { return false }
        return now >= due
    }

    /// Why the node is made again, for the log.
    package var relinkReason: String {
        erroredAt == nil ? "did not start within \(Self.relinkAfter)" : "was put in its error state by the server"
    }

    /// When the node is to be made again, if it does not start.
    private var relinkDue: ContinuousClock.Instant? {
        guard relinks < Self.maximumRelinks else { return nil }
        let due = connectedAt + Self.relinkAfter
        guard let erroredAt else { return due }
        return min(due, erroredAt + Self.relinkAfterError(relinks: relinks))
    }

    /// The next instant at which ``check(at:)`` or ``shouldRelink(at:)`` has something new to say: the
    /// relink or the never-started deadline, whichever comes first. Nil once the stream has started, or
    /// when it has neither a relink left nor a fault to report: the engine's timer sleeps until then.
    package var nextDeadline: ContinuousClock.Instant? {
        if let pausedAt { return pausedAt + Self.renegotiationGrace + .milliseconds(1) }
        guard !reachedStreaming else { return nil }
        let relink = relinkDue
        // check(at:) reports only once the deadline has strictly passed.
        let fault = faultReported ? nil : firstConnectedAt + Self.streamingDeadline + .milliseconds(1)
        return [relink, fault].compactMap { $0 }.min()
    }

    /// The health of the node made again at `now` in place of this one.
    package func relinked(at now: ContinuousClock.Instant) -> StreamHealth {
        StreamHealth(
            connectedAt: now, firstConnectedAt: firstConnectedAt, relinks: relinks + 1, faultReported: faultReported,
            errorReported: errorReported)
    }

    /// The stream's state changed at `now`; returns what to report, if anything. `connectionBroken` is
    /// true while the whole connection is known to be broken (then a pause is not the stream's fault). A
    /// pause by the server is judged when the stream plays again (a renegotiation) or at
    /// ``renegotiationGrace`` by ``check(at:)`` (a fault).
    package mutating func changed(
        from old: State, to new: State, error: String?, connectionBroken: Bool, at now: ContinuousClock.Instant
    ) -> Report? {
        let paused = pausedAt
        pausedAt = nil
        switch new {
        case .streaming:
            reachedStreaming = true
            faultReported = false
            errorReported = false
            erroredAt = nil
            if let paused { return .renegotiated(paused: now - paused) }
        case .paused where old == .streaming && !connectionBroken:
            pausedAt = now
        case .error:
            if !reachedStreaming { erroredAt = now }
            faultReported = true
            // Once until the stream plays again: its nodes made again after an error may err again.
            guard !errorReported else { return nil }
            errorReported = true
            return .fault("the server reported an error: \(error ?? "unknown")")
        default:
            break
        }
        return nil
    }

    /// Whether the node has just come into existence, so its PipeWire volume must be put at 1 before
    /// a volume a session manager saved can stay applied under our own gains.
    package static func isNodeCreated(from old: State, to new: State) -> Bool {
        old == .connecting && new == .paused
    }

    /// Checked by the engine's housekeeping (at ``nextDeadline`` at the latest): returns a fault once if
    /// the stream has not started by the deadline, or if the server paused it and it has not played
    /// again within ``renegotiationGrace``.
    package mutating func check(at now: ContinuousClock.Instant) -> String? {
        if let paused = pausedAt, now - paused > Self.renegotiationGrace {
            pausedAt = nil
            faultReported = true
            return "paused by the server without being asked (its links were removed; "
                + "the session manager may have exited)"
        }
        guard !reachedStreaming, !faultReported, now - firstConnectedAt > Self.streamingDeadline else { return nil }
        faultReported = true
        return "never reached STREAMING within \(Self.streamingDeadline) "
            + "(is a session manager such as WirePlumber running?)"
    }

    /// Reads a report of the node's channel volumes (we hold them at `own`).
    package func volumeReport(_ volumes: [Float], own: Float, at now: ContinuousClock.Instant) -> VolumeReport {
        guard !volumes.isEmpty else { return .own }
        let volume = volumes.reduce(0, +) / Float(volumes.count)
        guard abs(volume - own) > 1e-4 else { return .own }
        if !reachedStreaming || now - connectedAt < Self.restoreWindow { return .restored }
        return .external(volume)
    }
}
