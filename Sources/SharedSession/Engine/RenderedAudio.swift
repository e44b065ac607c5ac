/// What one or more render calls produced.
public struct RenderedAudio: Sendable, Hashable {
    /// Frames rendered.
    public let frames: Int
    /// The mix, interleaved.
    public let mix: [Float]
    /// Each stream's own output, interleaved, after its gain.
    public let stems: [StreamID: [Float]]
}
