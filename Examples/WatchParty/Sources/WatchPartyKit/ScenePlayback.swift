import SharedSession

/// What makes the scene's time pass: the offline engine rendering on demand, or a PipeWire daemon
/// playing in real time. The scene runner is the same on both; only this part differs.
protocol ScenePlayback: AnyObject, Sendable {
    /// The engine the session plays on.
    var engine: any AudioEngine { get }

    /// Seconds of the scene played so far: the event log's clock. Read from any thread, since
    /// engine events reach the log on the engine's own thread.
    var now: Double { get }

    /// What the live view says the scene plays on.
    var summary: String { get }

    /// Called right before the scene's first cue.
    func begin() throws

    /// Lets `quanta` quanta of `quantum` frames play, calling `quantumDone` after each with what it
    /// rendered: every stream's stem and the mix on the offline engine, `nil` on a sound server, where
    /// it is called about once a millisecond instead (the voice chat's sender must keep reading).
    func play(quanta: Int, quantum: Int, quantumDone: (RenderedAudio?) -> Void) throws

    /// Called after the scene's last cue: returns the scene's mix, interleaved, from its start.
    func finish(log: (String) -> Void) throws -> [Float]

    /// Where scene frame `frame` lies in the mix `finish` returned: the same frame offline; on a
    /// sound server, placed by the recording's own timing, which can drop frames.
    func mixFrame(ofSceneFrame frame: Int) -> Int

    /// Frames the mix lost or gained beyond timing jitter in the steps that overlap `frames` of scene
    /// time: 0 offline; on a sound server, where a loaded machine starved the graph or the recorder, so
    /// a level read there may not be what was played.
    func recordingGap(inSceneFrames frames: Range<Int>) -> Int
}
