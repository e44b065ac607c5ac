import SharedSession

/// What makes the scene's time pass: the offline engine rendering on demand, or a PipeWire daemon
/// playing in real time. The scene's script is the same on both; only this part differs.
protocol ScenePlayback: AnyObject, Sendable {
    /// The engine the session plays on.
    var engine: any AudioEngine { get }

    /// Seconds of the scene played so far: the timeline's clock. Read from any thread, since
    /// engine events reach the timeline on the engine's own thread.
    var now: Double { get }

    /// What the header line says the scene plays on.
    var summary: String { get }

    /// What the header line says about the levels.
    var levelsNote: String { get }

    /// Called right before the scene's first step.
    func begin() throws

    /// Lets `quanta` quanta of `quantum` frames play, calling `drainInput` at least once per
    /// quantum (the voice chat's sender must keep reading or its ring fills up).
    ///
    /// - Returns: the levels of the main stream's stem and of the mix over the last 100 ms, or nil
    ///   when they can only be measured from a recording after the scene.
    func play(quanta: Int, quantum: Int, mainStream: StreamID?, timeline: Timeline, drainInput: () -> Void) throws
        -> (main: Double?, mix: Double?)?

    /// Called after the scene's last step: returns the scene's mix, interleaved, from its start.
    func finish(timeline: Timeline) throws -> [Float]

    /// The main stream's level for the closing summary: what `reading` measured, or a measurement
    /// of the finished `mix` at the reading's time.
    func mainLevel(of reading: WatchPartyScene.Reading, in mix: [Float]) -> Double?
}
