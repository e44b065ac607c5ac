/// What an overlay SDK calls on its host to share the audio session: the shape of StreamLayer's
/// `SLROverlayDelegate`.
///
/// The host implements it (or uses ``OverlayAudioBridge``, the ready implementation over a
/// ``SharedSession``) and hands it to the SDK. Run ``OverlayAudioDelegate`` implementations through the
/// conformance kit in `SharedSessionTesting` to check every rule below.
///
/// ## Implementation requirements
/// - **Any thread.** Every method may be called from any thread, concurrently. Return promptly (no
///   waiting on the main thread, no I/O): a unit calls these on its own media path.
/// - **Counting.** `prepareAudioSession(for:)` and `disableAudioSession(for:)` are counted per type.
///   The session is active while either count is above zero: the voice configuration while any voice
///   session is held, the generic one while only generic sessions are. Releasing the last voice while
///   generics remain goes back to generic without a deactivation; releasing the last of all deactivates.
///   (The StreamLayer sample totals `generic + generic` and so deactivates under a live voice chat:
///   that is the classic defect this contract rules out.)
/// - **Ducking.** Each `requestAudioDucking()` lowers the main video to its volume × the duck level
///   (−20 dB by default); requests stack without compounding, and the main video comes back to the
///   host's *current* volume when the last one is undone, even if the host changed its volume while
///   ducked.
/// - **Unbalanced calls.** A `disableAudioSession(for:)` or `disableAudioDucking()` with nothing to
///   undo is ignored (and may be logged); it never makes a count negative or undoes someone else's
///   request.
/// - **Errors.** `prepareAudioSession(for:)` throws when the session cannot be prepared; a failed
///   prepare counts nothing, so the SDK must not call `disableAudioSession(for:)` for it.
public protocol OverlayAudioDelegate: AnyObject {
    /// Lowers the main video while the unit's own audio plays.
    func requestAudioDucking()
    /// Undoes one `requestAudioDucking()`.
    func disableAudioDucking()
    /// Prepares (and counts) a session of `type`.
    func prepareAudioSession(for type: AudioSessionType) throws
    /// Undoes one successful `prepareAudioSession(for:)` of `type`.
    func disableAudioSession(for type: AudioSessionType)
}
