/// An open stream as the snapshot shows it.
public struct StreamInfo: Sendable, Hashable, CustomStringConvertible {
    /// The stream's id.
    public let id: StreamID
    /// Its name, role and background-music flag.
    public let descriptor: StreamDescriptor
    /// Whether it is the main video-audio stream.
    public let isMain: Bool
    /// The unit that opened it, or `nil` for the host.
    public let owner: String?
    /// Its own volume (the host's volume for the main stream).
    public let volume: Float
    /// The gain the engine is told to reach.
    public let gain: Float
    /// Whether it is paused.
    public let isPaused: Bool

    /// `package`: SharedSessionRecording reads streams back from a recording's events.
    package init(
        id: StreamID, descriptor: StreamDescriptor, isMain: Bool, owner: String?, volume: Float, gain: Float,
        isPaused: Bool
    ) {
        self.id = id
        self.descriptor = descriptor
        self.isMain = isMain
        self.owner = owner
        self.volume = volume
        self.gain = gain
        self.isPaused = isPaused
    }

    public var description: String { "\(id) \(descriptor.name) gain \(gain)\(isPaused ? " paused" : "")" }
}
