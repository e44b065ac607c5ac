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

    /// Closes the stream. Closing twice does nothing.
    public func close() {
        session.closeStream(id)
    }

    public var description: String { "StreamHandle(\(id) \(descriptor.name))" }
}
