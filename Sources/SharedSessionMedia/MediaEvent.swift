public import SharedSession

/// Something that happened while a ``MediaFileSource`` played.
///
/// Events are delivered on the source's decoder thread (to ``MediaFileSource/eventHandler``) and
/// through ``MediaFileSource/events``, never on the render thread: the render side only counts
/// what it did in atomics (it may not wake another thread), and the decoder thread turns the counts
/// into events when it next wakes: at once after a control call, and while the source plays each
/// time it tops up the ring (about every 85 ms with the default ring), or at the latest 250 ms after
/// the render side has been given the last frame of the file. A seek's ``seeked(to:)`` comes as
/// soon as its audio is buffered.
public enum MediaEvent: Sendable, Hashable, CustomStringConvertible {
    /// The last frame of the file was rendered and looping is off. Playback stays at the end; a
    /// ``MediaFileSource/seek(to:)`` plays again.
    case endOfStream
    /// The last frame of the file was rendered and playback went on from the start (looping is on).
    case looped
    /// The render side asked for `frames` frames that the decoder had not delivered yet (it fell
    /// behind), and played silence in their place. Counted in ``MediaFileSource/underrunFrames``.
    case underrun(frames: Int)
    /// Part of the file could not be decoded: damaged packets were skipped, or (for a truncated file
    /// or a read error) the stream ended early. The error names the file and what was wrong.
    case decodeError(SessionError)
    /// A seek finished: the audio from `to` is buffered and plays from the next render call.
    case seeked(to: Duration)

    /// The event as one line for a log, such as `underrun(frames: 512)`.
    public var description: String {
        switch self {
        case .endOfStream: "endOfStream"
        case .looped: "looped"
        case .underrun(let frames): "underrun(frames: \(frames))"
        case .decodeError(let error): "decodeError(\(error))"
        case .seeked(let time): "seeked(to: \(time))"
        }
    }
}
