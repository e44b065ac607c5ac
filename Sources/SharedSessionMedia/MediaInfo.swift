/// What a media file's audio track is, as FFmpeg read it.
public struct MediaInfo: Sendable, Hashable, CustomStringConvertible {
    /// The container format's FFmpeg name ("wav", "flac", "ogg", "mp3", "mov,mp4,m4a,3gp,3g2,mj2",
    /// "matroska,webm").
    public let container: String
    /// The audio codec's FFmpeg name ("pcm_s16le", "flac", "vorbis", "opus", "mp3", "aac").
    public let codec: String
    /// The track's own sample rate; the source converts it to 48 kHz.
    public let sampleRate: Int
    /// The track's own channel count; the source converts it to stereo.
    public let channels: Int
    /// The track's channel layout as FFmpeg describes it ("mono", "stereo", "5.1", "2 channels").
    public let channelLayout: String

    /// Creates a description; ``MediaFileSource`` makes these from the file.
    public init(container: String, codec: String, sampleRate: Int, channels: Int, channelLayout: String) {
        self.container = container
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.channelLayout = channelLayout
    }

    /// The track in one line, such as "aac in mov,mp4,m4a,3gp,3g2,mj2, 44100 Hz, 5.1".
    public var description: String { "\(codec) in \(container), \(sampleRate) Hz, \(channelLayout)" }
}
