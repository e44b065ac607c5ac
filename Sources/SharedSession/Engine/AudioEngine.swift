/// What plays the session's streams: the offline mixer, the PipeWire backend, or a test's fake.
///
/// The session (``SharedSession``) is the only caller. It tells the engine which configuration is
/// active, which streams are open, the gain and play state of each, and whether rendering is
/// suspended; it never reads state back from the engine to decide anything, so an engine that
/// reconnects or restarts only has to re-apply what it was last told.
///
/// ## Implementation requirements
/// - **Never block.** Every method returns promptly: it publishes the change (an atomic store, a
///   message to the engine's own loop) and lets the render path pick it up. The session calls these
///   methods from whatever thread made the change, one call at a time, in the order of the changes.
/// - **Real-time render path.** Whatever renders audio (a PipeWire process callback, the offline
///   engine's render call) never locks, allocates, logs or calls anything that might. Use
///   ``StreamRenderer``, which both built-in engines share.
/// - **Events go out asynchronously.** Report route changes, other apps' audio, faults and
///   reconnections through the handler given to ``setEventHandler(_:)``, from a thread that holds
///   none of the engine's locks and never from inside one of the methods below, because the session
///   reacts by calling the engine again.
/// - **Streams are controlled through their handle.** ``openStream(_:descriptor:source:gain:paused:)``
///   returns the stream's ``StreamControl``; its gain ramps linearly from the level reached to the new
///   one, per sample, and a new call interrupts a ramp in progress without a jump. Hand back the
///   control side of the stream's ``StreamRenderer``, which does exactly that.
/// - **Pause keeps the position.** A paused stream stops pulling its source after a short fade and
///   continues from there when resumed. ``setSuspended(_:)`` silences every stream the same way
///   without changing their own pause state.
/// - **Errors are ``SessionError``s** whose message names what failed and how to fix it; the session
///   passes them on to its callers unchanged.
public protocol AudioEngine: AnyObject, Sendable {
    /// The format of every stream.
    var format: AudioFormat { get }

    /// Frames per render cycle the engine ran most recently; 0 before the first.
    var quantum: Int { get }

    /// Sets the function that receives the engine's events. Called once, by the session, before
    /// any other method.
    func setEventHandler(_ handler: @escaping @Sendable (EngineEvent) -> Void)

    /// Activates the session with `configuration`, or switches an active session to it.
    ///
    /// - Throws: ``SessionError`` (with the server's message where one exists) if the engine
    ///   refuses; the session then stays as it was.
    func activate(_ configuration: SessionConfiguration) throws(SessionError)

    /// Deactivates the session. With `notifyingOthers`, other applications are told they may
    /// resume (AVAudioSession's `notifyOthersOnDeactivation`).
    func deactivate(notifyingOthers: Bool)

    /// Opens a stream that starts at `gain` and, if `paused`, without pulling its source, and returns
    /// the control the session changes its gain and play state through.
    ///
    /// - Throws: ``SessionError`` (code `streamRefused`, `unknownTarget`, `engineUnavailable`) if the
    ///   stream cannot be opened; nothing is left half open.
    func openStream(
        _ id: StreamID, descriptor: StreamDescriptor, source: any AudioSource, gain: Float, paused: Bool
    ) throws(SessionError) -> any StreamControl

    /// Closes a stream. Closing one that is not open does nothing.
    func closeStream(_ id: StreamID)

    /// Silences all streams (an interruption, a background suspend) or lets them play again.
    func setSuspended(_ suspended: Bool)

    /// Starts delivering the voice input into `ring`.
    ///
    /// - Throws: ``SessionError`` if no input can be opened.
    func startCapture(into ring: AudioRingBuffer) throws(SessionError)

    /// Stops delivering voice input. Stopping when not capturing does nothing.
    func stopCapture()
}
