import SharedSession

/// The scripted scene: a movie plays, a feed clip and then a voice chat borrow the shared session,
/// and the platform interrupts along the way. How time passes is the playback's business: on the
/// offline engine it only moves when the scene renders, so every run produces the same audio and the
/// same timeline; on PipeWire it passes in real time.
final class WatchPartyScene {
    /// One measurement of the main stream, for the closing summary.
    struct Reading {
        let time: Double
        let label: String
        let mainLevel: Double?
    }

    private let playback: any ScenePlayback
    private let session: SharedSession
    private let timeline: Timeline
    private var mainStream: StreamID?
    private var readings: [Reading] = []
    private var microphoneFrames = 0
    /// Frames the script has asked to play so far: the scene time each reading belongs to, the
    /// same on both engines (on PipeWire the clock is a few milliseconds late by the time it is read).
    private var sceneFrames = 0
    /// Called after each step has played, with its label and the main stream (nil once it closed).
    var stepPlayed: ((_ label: String, _ main: StreamID?) -> Void)?

    init(playback: any ScenePlayback, session: SharedSession, timeline: Timeline) {
        self.playback = playback
        self.session = session
        self.timeline = timeline
    }

    /// Plays the scene and returns the rendered mix, interleaved, with what was measured on the way.
    func run() throws -> (mix: [Float], readings: [Reading]) {
        try playback.begin()

        timeline.step("Host: open the movie (220 + 330 Hz chord) and play it at volume 0.8")
        // The host's own playback holds a session too, so the overlays below join an active session
        // instead of activating and deactivating it around the movie.
        let hostLease = try session.acquire(.generic, owner: "host-player")
        try session.setMainVolume(0.8)
        let main = try session.openMainStream(
            StreamDescriptor(name: "movie", role: .movie), source: try Soundtrack.movie())
        mainStream = main.id
        session.play()
        try play(seconds: 2, label: "movie at 0.8")

        timeline.step("social-feed SDK: a clip with sound (880 Hz) starts in the feed")
        let feed = OverlayAudioBridge(session: session, owner: "social-feed")
        try feed.prepareAudioSession(for: .generic)
        feed.requestAudioDucking()
        let clip = try session.openStream(
            StreamDescriptor(name: "feed-clip", role: .music), source: try Soundtrack.feedClip(seconds: 2),
            owner: "social-feed")
        try play(seconds: 2, label: "ducked under the feed clip")

        timeline.step("social-feed SDK: the clip has ended; undo the duck and the session")
        clip.close()
        feed.disableAudioDucking()
        feed.disableAudioSession(for: .generic)
        try play(seconds: 0.8, label: "restored after the clip")

        timeline.step("System: another app starts playing audio")
        session.handle(.otherAudioStarted)
        timeline.note("the generic session mixes with others; only streams marked background music are muted")
        try play(seconds: 0.8, label: "alongside another app")

        timeline.step("System: the other app stops")
        session.handle(.otherAudioStopped)
        try play(seconds: 0.4, label: "other app gone")

        timeline.step("watch-party SDK: voice chat starts (far-end voice at 600 Hz)")
        let party = OverlayAudioBridge(session: session, owner: "watch-party")
        try party.prepareAudioSession(for: .voice)
        party.requestAudioDucking()
        let voice = try session.openStream(
            StreamDescriptor(name: "far-end-voice", role: .communication), source: try Soundtrack.farEndVoice(),
            owner: "watch-party")
        try play(seconds: 1.2, label: "ducked under the voice chat")

        timeline.step("Host: the viewer turns the movie down to 0.6 during the chat")
        try session.setMainVolume(0.6)
        try play(seconds: 0.8, label: "ducked, new volume 0.6")

        timeline.step("System: the app goes to the background and the screen locks (4096-frame quanta)")
        session.handle(.didEnterBackground)
        timeline.note("playAndRecord renders in the background: the chat and the movie go on")
        try play(seconds: 2, quantum: 4096, label: "locked screen")

        timeline.step("System: the app comes back to the foreground")
        session.handle(.willEnterForeground)
        try play(seconds: 0.5, label: "foreground")

        timeline.step("System: a phone call interrupts")
        session.handle(.interruptionBegan)
        try play(seconds: 1, label: "phone call")

        timeline.step("System: the call ends with shouldResume")
        session.handle(.interruptionEnded(shouldResume: true))
        try play(seconds: 0.8, label: "back in the chat")

        timeline.step("watch-party SDK: the far end hangs up; the voice chat ends")
        // Fading the far end out before closing it keeps the hang-up from clicking in the WAV.
        try voice.setVolume(0)
        try play(seconds: 0.2, label: "far end fading out")
        voice.close()
        party.disableAudioDucking()
        party.disableAudioSession(for: .voice)
        timeline.note(
            "the chat's sender read \(formatSeconds(microphoneFrames)) of microphone audio from session.voiceInput")
        try play(seconds: 1.2, label: "restored at 0.6")

        timeline.step("Host: stop the movie and give the session back")
        session.pause()
        // Let the pause's de-click fade render before the stream disappears.
        try play(seconds: 0.1, label: "paused")
        main.close()
        mainStream = nil
        hostLease.release()
        try play(seconds: 0.2, label: "stopped")
        let held = (feed: feed.heldCounts, party: party.heldCounts)
        timeline.note(
            "bridges still hold: social-feed \(held.feed.generic + held.feed.voice) sessions, \(held.feed.ducks) ducks; "
                + "watch-party \(held.party.generic + held.party.voice) sessions, \(held.party.ducks) ducks")
        session.close()

        return (try playback.finish(timeline: timeline), readings)
    }

    /// Plays `seconds` (rounded up to whole quanta, so the quantum only changes where the scene
    /// says so) and prints the levels of its last 100 ms, or the session's state where the levels
    /// are only measured from the recording after the scene.
    private func play(seconds: Double, quantum: Int = 1024, label: String) throws {
        let format = playback.engine.format
        let quanta = Int((seconds * Double(format.sampleRate) / Double(quantum)).rounded(.up))
        let levels = try playback.play(quanta: quanta, quantum: quantum, mainStream: mainStream, timeline: timeline) {
            // Stands in for the voice chat's sender, which must keep reading or the ring fills up.
            microphoneFrames += session.voiceInput.readAll().count / format.channels
        }
        sceneFrames += quanta * quantum
        if let levels {
            timeline.level(main: levels.main, mix: levels.mix, snapshot: session.snapshot)
        } else {
            timeline.state(snapshot: session.snapshot)
        }
        readings.append(
            Reading(time: Double(sceneFrames) / Double(format.sampleRate), label: label, mainLevel: levels?.main))
        stepPlayed?(label, mainStream)
    }

    private func formatSeconds(_ frames: Int) -> String {
        let sampleRate = playback.engine.format.sampleRate
        let tenths = (frames * 10 + sampleRate / 2) / sampleRate
        return "\(tenths / 10).\(tenths % 10) s"
    }
}
