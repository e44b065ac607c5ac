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
    /// starts at: a stream an engine does not render but controls by other means (the PipeWire engine's
    /// adopted nodes of other processes), opened and recorded as every other stream.
    ///
    /// Opens the stream at the gain and play state the state gives it, then tells the state it opened
    /// (or that the engine refused it), all under the lane, so no other input comes between the two and
    /// the state records the gain the engine was given.
    package func openStream(
        _ descriptor: StreamDescriptor, isMain: Bool, owner: String?, volume: Float,
        open: (StreamID, _ gain: Float, _ paused: Bool) throws(SessionError) -> any StreamControl
    ) throws(SessionError) -> StreamHandle {
        if !isMain {
            try checked { () throws(SessionError) in try SessionError.checkUnitInterval(volume, name: "stream volume") }
        }
        let id: StreamID
        let queued: Bool
        do throws(SessionError) {
            (id, queued) = try lane.withLock { lane throws(SessionError) -> (StreamID, Bool) in
                let (id, target) = try state.withLock { state throws(SessionError) in
                    try state.opening(descriptor, isMain: isMain, volume: volume)
                }
                do throws(SessionError) {
                    lane.controls[id] = try open(id, target.gain, target.paused)
                } catch {
                    // The engine's refusal is an input of its own: it spends the stream's id.
                    _ = run(.openStreamRefused(descriptor, message: error.message), &lane) { _, _ in () }
                    throw error
                }
                let input = SessionInput.openStream(
                    descriptor, owner: owner, volume: volume, isMain: isMain, stream: id)
                return (id, run(input, &lane) { _, _ in () }.1)
            }
        } catch {
            reject(error)
            throw error
        }
        if queued { delivery.drain(from: self) }
        return StreamHandle(id: id, descriptor: descriptor, isMain: isMain, session: self)
    }

    func closeStream(_ id: StreamID) {
        submit(.closeStream(id))
    }

    func setStreamVolume(_ id: StreamID, _ volume: Float) throws(SessionError) {
        try checked { () throws(SessionError) in try SessionError.checkUnitInterval(volume, name: "stream volume") }
        guard submit(.setStreamVolume(id, volume)) != .ignored else {
            let error = SessionError(
                code: .unknownStream, message: "\(id) is not open: open it before setting its volume")
            reject(error)
            throw error
        }
    }
}
