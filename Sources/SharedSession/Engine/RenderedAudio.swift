/// What one or more render calls produced.
public struct RenderedAudio: Sendable, Hashable {
    /// Frames rendered.
    public let frames: Int
    /// The mix, interleaved.
    public let mix: [Float]
    /// Each stream's own output, interleaved, after its gain.
    public let stems: [StreamID: [Float]]

    /// `package`: SharedSessionRecording's replayer joins the audio of many render calls into one.
    package init(frames: Int, mix: [Float], stems: [StreamID: [Float]]) {
        self.frames = frames
        self.mix = mix
        self.stems = stems
    }
}
