/// The render side's writer of a ``HeardTimeline``: it joins the frames of each render call to the
/// newest run (continuous audio) when they follow it in media and in time, or starts a new run. Render
/// side only; real-time safe.
struct HeardTimelineWriter {
    /// How far the instant a render call's frames are heard may drift from where the run before them
    /// ends before they start a new run: jitter in the sound server's timestamps below it is smoothed
    /// over, a real change (a route's latency, a quantum change, a clock drifting) above it is
    /// followed. A quarter of a millisecond: a quarter of the accuracy promised at the ear.
    static let resyncThreshold = 250_000

    let timeline: HeardTimeline
    /// When the listener hears the first frame of this render call, in monotonic nanoseconds; -1:
    /// the engine did not say.
    var callHeardAt = -1
    /// The newest run: when its first frame is heard, its first media frame and its length; `runOpen`
    /// once there is one.
    private var runStart = 0
    private var runMedia = 0
    private var runFrames = 0
    private var runOpen = false
    /// A seek was taken up: the next frames start a run that instants before it read as the seek's.
    private var seekRunPending = false

    init(timeline: HeardTimeline) {
        self.timeline = timeline
    }

    /// The frames that follow start a seek's run.
    mutating func startSeek() {
        seekRunPending = true
    }

    /// Notes that `frames` frames from media frame `media`, written `offset` frames into this render
    /// call, are heard from the call's instant on: they extend the run before them when they follow it
    /// in media and in time (within ``resyncThreshold``), or start a new one. A call the engine gave no
    /// instant continues the run it follows, or is not noted. Returns true when the frames started a
    /// seek's run: from now on the timeline answers for that seek.
    @inline(__always)
    mutating func note(offset: Int, media: Int, frames: Int) -> Bool {
        let runEnd = runStart &+ timeline.nanoseconds(ofFrames: runFrames)
        let at: Int
        if callHeardAt >= 0 {
            at = callHeardAt &+ timeline.nanoseconds(ofFrames: offset)
        } else if runOpen, !seekRunPending, media == runMedia &+ runFrames {
            at = runEnd
        } else {
            return false
        }
        let drift = at &- runEnd
        if runOpen, !seekRunPending, media == runMedia &+ runFrames, drift <= Self.resyncThreshold,
            drift >= -Self.resyncThreshold
        {
            runFrames &+= frames
            timeline.extend(to: runFrames)
            return false
        }
        runStart = at
        runMedia = media
        runFrames = frames
        runOpen = true
        timeline.begin(start: at, media: media, frames: frames, startsSeek: seekRunPending)
        defer { seekRunPending = false }
        return seekRunPending
    }
}
