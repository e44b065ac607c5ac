/// The kind of session an SDK unit asks the host for (StreamLayer's `SLRAudioSessionType`).
public enum AudioSessionType: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Playback of the unit's own media alongside the main video: the policy's generic configuration.
    case generic
    /// A voice chat with the microphone: the policy's voice configuration. Takes precedence over generic.
    case voice

    public var description: String {
        switch self {
        case .generic: "generic"
        case .voice: "voice"
        }
    }
}
