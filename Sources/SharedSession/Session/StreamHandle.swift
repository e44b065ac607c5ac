/// An open stream of the session, given by ``SharedSession/openMainStream(_:source:)`` or
/// ``SharedSession/openStream(_:source:volume:owner:)``. The stream stays open until ``close()`` or until
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

    /// The stream's output latency: the time from the start of a render cycle to the listener hearing
    /// the first frame rendered in it, as the engine last measured it. On PipeWire it is the graph's
    /// and the device's delay for this stream's route plus the stream's own queue: a quantum or two on
    /// a plain sink, 150 to 250 ms on Bluetooth headphones. The offline engine's is zero. `nil` before
    /// the stream's first cycle, after it closed, or on an engine that cannot tell. A change is the
    /// event ``SessionEvent/outputLatencyChanged(_:from:to:)``.
    public var outputLatency: Duration? {
        session.lane.withLock { $0.controls[id]?.outputLatency }
    }

    /// The loudness duck on this stream as its render side measures it now: the depth heard and the
    /// two loudnesses (``LoudnessDuckReading``). Only the main stream is ducked; `nil` while no loudness
    /// duck is set, after the stream closed, or on an engine that cannot measure it. The engine reports
    /// it as it moves with ``SessionEvent/Kind/loudnessDuckChanged(_:_:)``.
    public var loudnessDuck: LoudnessDuckReading? {
        session.lane.withLock { $0.controls[id]?.loudnessDuck }
    }

    /// Closes the stream. Closing twice does nothing.
    public func close() {
        session.closeStream(id)
    }

    public var description: String { "StreamHandle(\(id) \(descriptor.name))" }
}
