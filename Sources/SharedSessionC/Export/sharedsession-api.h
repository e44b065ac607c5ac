
/// The engine a session plays on.
typedef SWIFT_ENUM_NAMED(int32_t, sharedsession_engine, "EngineKind", closed) {
/// Renders only when the host asks (<code>sharedsession_render</code>): tests, servers, no sound server.
  sharedsession_engineOffline = 0,
/// The PipeWire daemon of the user’s session.
  sharedsession_enginePipewire = 1,
};

/// The kind of session a lease holds.
typedef SWIFT_ENUM_NAMED(int32_t, sharedsession_lease_type, "LeaseType", closed) {
/// Playback alongside the movie.
  sharedsession_lease_typeGeneric = 0,
/// Playback and recording (a voice chat); takes precedence over generic.
  sharedsession_lease_typeVoice = 1,
};

/// The platform’s events the host passes on (<code>sharedsession_handle_event</code>).
typedef SWIFT_ENUM_NAMED(int32_t, sharedsession_platform_event, "PlatformEvent", closed) {
  sharedsession_platform_eventInterruptionBegan = 0,
/// The interruption ended and the platform says playback should resume.
  sharedsession_platform_eventInterruptionEndedResume = 1,
/// The interruption ended and playback should not resume by itself.
  sharedsession_platform_eventInterruptionEnded = 2,
  sharedsession_platform_eventDidEnterBackground = 3,
  sharedsession_platform_eventWillEnterForeground = 4,
  sharedsession_platform_eventOtherAudioStarted = 5,
  sharedsession_platform_eventOtherAudioStopped = 6,
};

/// What every call of the C API returns: <code>sharedsession_statusOk</code>, or why it did nothing.
/// The codes after <code>sessionError</code> name a <code>SessionError</code> code of the Swift API; the message
/// (<code>sharedsession_last_error_message</code>) says what was wrong and how to fix it.
typedef SWIFT_ENUM_NAMED(int32_t, sharedsession_status, "Status", closed) {
  sharedsession_statusOk = 0,
/// The handle is 0, was never handed out, was released already, or belonged to a closed session.
  sharedsession_statusInvalidHandle = 1,
/// The handle is live but of another kind (a lease where a session was asked for).
  sharedsession_statusWrongHandleKind = 2,
/// A required pointer was NULL, a string was not UTF-8, or a number was out of its range.
  sharedsession_statusInvalidArgument = 3,
/// The call needs the offline engine (rendering by hand) and the session runs on another.
  sharedsession_statusNotOffline = 4,
/// The call needs the PipeWire engine (adopting another client’s nodes) and the session runs offline.
  sharedsession_statusNeedsPipeWire = 5,
/// The session’s own error: see the message.
  sharedsession_statusSessionError = 100,
  sharedsession_statusEngineUnavailable = 101,
  sharedsession_statusActivationRefused = 102,
  sharedsession_statusStreamRefused = 103,
  sharedsession_statusMainStreamAlreadyOpen = 104,
  sharedsession_statusFileError = 105,
  sharedsession_statusMediaUnreadable = 106,
  sharedsession_statusNoAudioTrack = 107,
  sharedsession_statusLimitExceeded = 108,
  sharedsession_statusSessionClosed = 109,
  sharedsession_statusInvalidValue = 110,
  sharedsession_statusInvalidConfiguration = 111,
};

/// Takes a session lease of <code>type</code> (a <code>sharedsession_lease_type</code>) for <code>owner</code>; writes its handle. Release it with
/// <code>sharedsession_release</code>.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_acquire(uint64_t session, int32_t type, char const * _Nullable owner, uint64_t * _Nullable lease) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Makes the nodes of another PipeWire client the main stream (a GStreamer, mpv or VLC player’s): those
/// of the process <code>processID</code> and its children (0: any process), whose <code>application.name</code> is
/// <code>applicationName</code> (NULL: any); at least one of the two. Ducks, the host’s volume and pauses then act
/// on the player’s own nodes; releasing the stream gives them back their volume. Writes the stream’s
/// handle; on the offline engine returns <code>needsPipeWire</code>.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_adopt_main(uint64_t session, int32_t processID, char const * _Nullable applicationName, uint64_t * _Nullable stream) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Ducks the main stream for <code>owner</code> to the host’s volume × <code>level</code> (0 through 1), or by the
/// policy’s level when <code>level</code> is negative; writes the duck’s handle.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_duck(uint64_t session, char const * _Nullable owner, float level, uint64_t * _Nullable duck) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// The engine the session plays on (a <code>sharedsession_engine</code>).
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_engine_of(uint64_t session, int32_t * _Nullable engine) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Frees a string the library handed out (a snapshot). A pointer it did not hand out, or freed
/// already, returns <code>invalidArgument</code> and is left alone; NULL does nothing.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_free(char * _Nullable string) SWIFT_NOEXCEPT;

/// The main stream’s gains now: the host’s volume, the duck factor, their product, and the number
/// of live ducks. Any pointer may be NULL.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_gains(uint64_t session, float * _Nullable volume, float * _Nullable duckFactor, float * _Nullable mainGain, int32_t * _Nullable ducks) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Passes one of the platform’s events (a <code>sharedsession_platform_event</code>) on.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_handle_event(uint64_t session, int32_t event) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// The message of this thread’s last call: why it failed, or “” if it succeeded. Owned by the
/// library; valid until this thread’s next call.
SWIFT_EXTERN char const * _Nonnull sharedsession_last_error_message(void) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Opens the media file at <code>path</code> (decoded by FFmpeg) as the main stream, playing; writes the
/// stream’s handle. Releasing it closes the stream and the file.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_open_main_media(uint64_t session, char const * _Nullable path, uint64_t * _Nullable stream) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Pauses the main stream for <code>owner</code> instead of ducking it; writes the pause’s handle.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_pause_main(uint64_t session, char const * _Nullable owner, uint64_t * _Nullable pause) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Releases any handle: a lease or a duck is given back, a stream closed, a server stopped; a
/// session is closed with everything it handed out (those handles go stale). A handle released
/// twice, 0 or stale returns <code>invalidHandle</code>.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_release(uint64_t handle) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Renders <code>milliseconds</code> of the session on the offline engine, at once; writes the main stream’s
/// level over the last 100 ms in dBFS (-200 for silence or no main stream) if <code>mainLevel</code> is
/// not NULL. On another engine it returns <code>notOffline</code>: that engine plays in real time by itself.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_render(uint64_t session, int32_t milliseconds, double * _Nullable mainLevel) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Passes a route change on: <code>reason</code> as the platform names it (“newDeviceAvailable”,
/// “oldDeviceUnavailable”, …), the outputs before and after (either may be NULL).
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_route_changed(uint64_t session, char const * _Nullable reason, char const * _Nullable previous, char const * _Nullable current) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Serves the session to units in other processes at the Unix socket <code>path</code> (mode 0600, the same
/// user only); writes the server’s handle. Releasing it disconnects the units, whose leases go.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_serve(uint64_t session, char const * _Nullable path, uint64_t * _Nullable server) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// The callback that receives every event of <code>session</code> as one line of JSON (the recordings’ form):
/// on one thread of the library’s own, in order, one at a time, with no lock held, so it may call
/// the library (even release the session). The string is valid during the call. NULL stops it.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_set_event_callback(uint64_t session, void (* _Nullable callback)(uint64_t, char const * _Nullable, void * _Nullable), void * _Nullable context) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Sets the host’s volume for the main stream (0 through 1); ducks multiply it, never replace it.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_set_main_volume(uint64_t session, float volume) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// The snapshot as JSON, in the recordings’ form; free it with <code>sharedsession_free</code>.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_snapshot_json(uint64_t session, char * _Nullable * _Nullable json) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// The snapshot as text, for people (what is held, ducked and playing); free it with
/// <code>sharedsession_free</code>.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_snapshot_text(uint64_t session, char * _Nullable * _Nullable text) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// Starts a session on <code>engine</code> (a <code>sharedsession_engine</code>), named <code>applicationName</code> in the sound server; writes its
/// handle. On PipeWire with no daemon reachable it returns <code>engineUnavailable</code> with the daemon’s error as the message
/// (where it looked, how to start one): start on the offline engine then.
SWIFT_EXTERN SWIFT_ENUM_TAG sharedsession_status sharedsession_start(int32_t engine, char const * _Nullable applicationName, uint64_t * _Nullable session) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

/// The library’s version, “major.minor.patch”; a static string, never freed.
SWIFT_EXTERN char const * _Nonnull sharedsession_version(void) SWIFT_NOEXCEPT SWIFT_WARN_UNUSED_RESULT;

