/// The signal a voice-activity duck listens to.
public enum ActivitySource: Sendable, Hashable, CustomStringConvertible {
    /// An open stream (the far end of a voice chat), as it is heard.
    case stream(StreamID)
    /// The captured microphone: the local user speaking.
    case voiceInput

    public var description: String {
        switch self {
        case .stream(let id): "\(id)"
        case .voiceInput: "voice input"
        }
    }
}
