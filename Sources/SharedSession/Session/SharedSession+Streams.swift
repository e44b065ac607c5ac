/// The streams the session plays: the main video-audio stream, which ducking and pause requests act
/// on, and the overlays.
extension SharedSession {
    /// Opens the main video-audio stream, which ducking and pause requests act on. It starts at the
    /// gain and play state the session is in (ducked if a duck is live: never a flash at full volume).
    ///
    /// - Throws: ``SessionError`` with code `mainStreamAlreadyOpen` if one is open, or the engine's
    ///   error if it cannot open the stream.
    public func openMainStream(
        _ descriptor: StreamDescriptor = StreamDescriptor(name: "main", role: .movie), source: any AudioSource
    ) throws(SessionError) -> StreamHandle {
        try openStream(descriptor, isMain: true, owner: nil, volume: 1) {
            [engine] id, gain, paused throws(SessionError) in
            try engine.openStream(id, descriptor: descriptor, source: source, gain: gain, paused: paused)
        }
    }

    /// Opens an overlay stream (a feed clip, a notification, the far end of a voice chat) at its own
    /// `volume`. Ducking does not touch it; background-music muting does if the descriptor says so.
    ///
    /// `owner` names the unit that plays it (an SDK's name), so the stream's events say who caused
    /// them; `nil` for the host's own streams.
    ///
    /// - Throws: ``SessionError`` with code `invalidValue` for a bad volume, or the engine's error.
    public func openStream(
        _ descriptor: StreamDescriptor, source: any AudioSource, volume: Float = 1, owner: String? = nil
    ) throws(SessionError) -> StreamHandle {
        try openStream(descriptor, isMain: false, owner: owner, volume: volume) {
            [engine] id, gain, paused throws(SessionError) in
            try engine.openStream(id, descriptor: descriptor, source: source, gain: gain, paused: paused)
        }
    }

    /// Opens a stream whose control `open` makes, given the stream's id and the gain and play state it
    /// starts at: the engine's `openStream` for a stream it renders, or another entry point of the
    /// engine's for a stream it controls without rendering it (the PipeWire engine's adopted nodes of
    /// other processes), opened and recorded as every other stream.
    ///
    /// Opens the stream at the id, gain and play state the state gives it, then tells the state it
    /// opened (or that the engine refused it), all under the lane, so no other request comes between
    /// the two and the state records the gain the engine was given. A refusal (the state's checks, or
    /// the engine's) is recorded as `rejected` and thrown, as any request's.
    package func openStream(
        _ descriptor: StreamDescriptor, isMain: Bool, owner: String?, volume: Float,
        open: (StreamID, _ gain: Float, _ paused: Bool) throws(SessionError) -> any StreamControl
    ) throws(SessionError) -> StreamHandle {
        let (opened, queued) = lane.withLock { lane -> (Result<StreamID, SessionError>, Bool) in
            let id: StreamID
            let target: StreamTarget
            do throws(SessionError) {
                (id, target) = try state.withLock { state throws(SessionError) in
                    try state.opening(descriptor, isMain: isMain, volume: volume)
                }
            } catch {
                let (_, queued) = runRefusable(.rejected(error), &lane)
                return (.failure(error), queued)
            }
            do throws(SessionError) {
                lane.controls[id] = try open(id, target.gain, target.paused)
            } catch {
                // The engine's refusal spends the stream's id (on the record as it is), then is refused.
                let (_, queued) = runRefusable(
                    .openStreamRefused(descriptor, message: error.message), &lane, refusal: { _ in error })
                return (.failure(error), queued)
            }
            let request = SessionRequest.openStream(descriptor, owner: owner, volume: volume, isMain: isMain)
            let (joined, queued) = run(request, &lane) { _, outcome in outcome }
            precondition(joined == .opened(id), "\(id) opened on the engine, but the state says \(joined)")
            return (.success(id), queued)
        }
        if queued { delivery.drain(from: self) }
        return StreamHandle(id: try opened.get(), descriptor: descriptor, isMain: isMain, session: self)
    }

    func closeStream(_ id: StreamID) {
        submit(.closeStream(id))
    }

    func setStreamVolume(_ id: StreamID, _ volume: Float) throws(SessionError) {
        try submitRefusable(.setStreamVolume(id, volume)) { outcome in
            guard outcome == .ignored else { return nil }
            return SessionError(code: .unknownStream, message: "\(id) is not open: open it before setting its volume")
        }
    }
}
