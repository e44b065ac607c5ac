import Foundation
public import Logging
import SharedSession
import SharedSessionMedia
import SharedSessionPipeWire
import SharedSessionPipeWireTesting
import Synchronization

/// Plays a ``Scene`` through a `SharedSession`: the host's movie as the main stream, the SDKs through
/// `OverlayAudioBridge`s, the platform's events through `handle(_:)`, on the offline engine or on a
/// PipeWire daemon, while a ``LiveView`` shows it happen.
public final class SceneRunner {
    /// Where the scene plays.
    public enum Engine: Sendable {
        /// The offline engine, faster than real time and the same on every run.
        case offline
        /// A PipeWire daemon in real time; `recordingTo` is where `pw-record` writes the sink's monitor.
        case pipewire(recordingTo: String)
    }

    private let scene: Scene
    private let engineChoice: Engine
    private let view: LiveView
    private let logger: Logger
    private let recordingPath: String?

    /// A runner for `scene` on `engine`, showing it on `view`; with `recordingTo`, the session's
    /// inputs and events are recorded to that file (a ``RunRecorder``), for `watch-party --replay`.
    public init(scene: Scene, engine: Engine, view: LiveView, logger: Logger, recordingTo: String? = nil) {
        self.scene = scene
        self.engineChoice = engine
        self.view = view
        self.logger = logger
        self.recordingPath = recordingTo
    }

    /// Plays the scene to its end and returns what it played and measured.
    ///
    /// - Throws: ``SessionError`` when a media file is missing or cannot be decoded, or the engine refuses
    ///   something; `MonitorRecorder.Failure` when PipeWire's sink cannot be recorded.
    public func run() throws -> SceneRun {
        view.say("watch-party: \"\(scene.title)\" (\(scene.path)), \(Self.seconds(scene.duration))")
        let view = self.view
        let library = try MediaLibrary(scene: scene) { name, event in
            switch event {
            case .endOfStream: view.note("\(name): the file ended")
            case .looped: view.note("\(name): looped")
            case .seeked(let time): view.note("\(name): seeked to \(time)")
            case .underrun(let frames): view.note("\(name): UNDERRUN, \(frames) frames played as silence")
            case .decodeError(let error): view.note("\(name): decoding error: \(error.message)")
            }
        }
        if scene.movieLatency != nil, engineChoice.isOffline || scene.moviePlayer == .gstreamer {
            throw SessionError(
                code: .invalidConfiguration,
                message: "\(scene.path): the movie's \"latency\" is a route on PipeWire the session's own movie plays "
                    + "through: run it with --engine pipewire, and without \"player\": \"gstreamer\"")
        }
        if scene.moviePlayer == .gstreamer, engineChoice.isOffline {
            throw SessionError(
                code: .invalidConfiguration,
                message: "\(scene.path): the movie plays through GStreamer (\"player\": \"gstreamer\"), in a "
                    + "process of its own that only a sound server can hear: run it with --engine pipewire")
        }
        let playback: any ScenePlayback
        switch engineChoice {
        case .offline:
            playback = try OfflinePlayback()
        case .pipewire(let path):
            playback = try PipeWirePlayback(recordingTo: path, logger: logger) { view.note($0) }
        }
        let session = SharedSession(engine: playback.engine, policy: .default, logger: logger)
        let offline = playback.engine as? OfflineEngine
        let recorder = try recordingPath.map { path throws(SessionError) in
            try RunRecorder(session: session, path: path, offline: offline)
        }
        let log = EventLog(clock: { playback.now }, sink: { view.event($0) })
        // The session holds its delegate weakly; `log` lives until the end of run().
        session.delegate = log
        view.begin(scene: scene, engine: playback.summary, measuresStems: engineChoice.isOffline)

        let state = RunState(scene: scene, session: session, library: library, playback: playback, view: view)
        let started = ContinuousClock.now
        do {
            try playback.begin()
            try state.openMovie()
            for cue in scene.cues {
                try state.advance(to: state.frame(at: cue.time))
                recorder?.recordLevels(of: state.names.keys, label: cue.action.caption)
                try state.apply(cue)
            }
            try state.advance(to: state.frame(at: scene.duration))
            recorder?.recordLevels(of: state.names.keys, label: "end of the scene")
        } catch {
            // Give back what the scene held and stop the engine (and PipeWire's recorder) before saying why.
            view.end(snapshot: session.snapshot)
            state.closeEverything()
            session.close()
            try? recorder?.stop()
            _ = try? playback.finish { view.note($0) }
            throw error
        }
        let rendered = ContinuousClock.now - started
        view.end(snapshot: session.snapshot)
        let decoding = state.decodingReport(library: library)
        let underruns = state.sources.reduce(into: [String: Int]()) {
            $0[$1.name, default: 0] += $1.source.underrunCount
        }
        for line in decoding { view.note(line) }
        state.closeEverything()
        session.close()
        try recorder?.stop()
        let mix = try playback.finish { view.note($0) }
        withExtendedLifetime(log) {}

        let measure = Measurements(scene: scene, playback: playback, mix: mix, stems: state.stems)
        return SceneRun(
            scene: scene, engine: playback.summary, mix: mix, stems: state.stems,
            tracks: measure.tracks(labels: state.labels) + state.loudnessTracks(),
            markers: state.markers, lanes: state.lanes(endingAt: scene.duration),
            marks: measure.marks(state.markTimes), events: log.all, decoding: decoding, underruns: underruns,
            duration: scene.duration,
            renderSeconds: Self.seconds(rendered))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }
}

extension SceneRunner.Engine {
    var isOffline: Bool {
        if case .offline = self { true } else { false }
    }
}

/// The state of one run: the streams and leases the cues opened, the frames played, the stems.
final class RunState {
    let scene: Scene
    let session: SharedSession
    let library: MediaLibrary
    let playback: any ScenePlayback
    let view: LiveView
    let rate: Int
    let channels: Int

    var frame = 0
    var quantum: Int
    /// Every stream's name by id, for the stems.
    var labels: [String] = ["movie"]
    var names: [StreamID: String] = [:]
    /// Each named stream's stem from scene time 0, on the offline engine.
    var stems: [String: [Float]] = [:]
    var markers: [SceneRun.Marker] = []
    var markTimes: [(time: Double, cue: Scene.Cue)] = []
    var laneStarts: [String: Double] = [:]
    var laneSpans: [String: [ClosedRange<Double>]] = [:]
    /// Things to do at a later frame: closing a stream after its fade-out, a notification at its end.
    var pending: [(frame: Int, name: String, work: () -> Void)] = []

    var hostLease: SessionLease?
    var movie: StreamHandle?
    let feedBridge: OverlayAudioBridge
    let voiceBridge: OverlayAudioBridge
    var feed: StreamHandle?
    var voice: StreamHandle?
    /// The voice-chat SDK when it joined as a helper process.
    var voiceHelper: VoiceHelper?
    /// The watch-party's duck when it ducks by loudness, and the readings of it over the run: scene
    /// seconds and what the movie's render side measured (nil: no loudness duck then).
    var voiceLoudnessDuck: DuckLease?
    var loudnessReadings: [(time: Double, reading: LoudnessDuckReading?)] = []
    var notifications: [StreamHandle] = []
    /// Every media source opened, by stream name, to keep their decoders ahead offline and to count
    /// their underruns at the end.
    var sources: [(name: String, media: Scene.Media, source: MediaFileSource)] = []
    var movieSource: MediaFileSource?
    /// The GStreamer player of a scene whose movie plays through it, and the adoption of its node.
    var gstreamer: GStreamerPlayer?
    /// The movie's route when the scene gives it a latency.
    var latencySink: DeclaredLatencySink?
    var adoption: NodeAdoption?
    /// A seek flushed the movie's ring since the decoders were last waited for.
    var seekPending = false
    var notificationDucks: [DuckLease] = []

    init(scene: Scene, session: SharedSession, library: MediaLibrary, playback: any ScenePlayback, view: LiveView) {
        self.scene = scene
        self.session = session
        self.library = library
        self.playback = playback
        self.view = view
        rate = playback.engine.format.sampleRate
        channels = playback.engine.format.channels
        quantum = scene.quantum
        feedBridge = OverlayAudioBridge(session: session, owner: "social-feed")
        voiceBridge = OverlayAudioBridge(session: session, owner: "watch-party")
    }

    func frame(at time: Double) -> Int { Int((time * Double(rate)).rounded()) }

    var now: Double { Double(frame) / Double(rate) }

    func openMovie() throws {
        view.step(at: 0, "host: the movie opens at volume \(Scene.format(scene.movie.volume))")
        // The host's own playback holds a session too, so the overlays join an active session
        // instead of activating and deactivating it around the movie.
        hostLease = try session.acquire(.generic, owner: "host-player")
        try session.setMainVolume(scene.movie.volume)
        if scene.moviePlayer == .gstreamer { return try openGStreamerMovie() }
        let source = try library.source(for: scene.movie, name: "movie")
        sources.append(("movie", scene.movie, source))
        movieSource = source
        var descriptor = StreamDescriptor(name: "movie", role: .movie)
        if let latency = scene.movieLatency {
            // The movie's route: a sink that delays it and says so, in front of the default sink.
            guard let defaultSink = (playback.engine as? PipeWireEngine)?.defaultSink else {
                throw SessionError(
                    code: .engineUnavailable,
                    message: "the movie's \"latency\" needs the default sink's name, and PipeWire has none yet")
            }
            let sink = try DeclaredLatencySink(
                name: "watch-party-headphones", target: defaultSink, delay: .nanoseconds(Int64(latency * 1e9)))
            latencySink = sink
            // The sink exists on the daemon; the engine hears of it a moment later, and names only sinks it knows.
            let engine = playback.engine as? PipeWireEngine
            let known = ContinuousClock.now + .seconds(2)
            while engine?.sinkNames.contains(sink.name) == false, ContinuousClock.now < known {
                Thread.sleep(forTimeInterval: 0.005)
            }
            descriptor.target = sink.name
            view.step(
                at: 0,
                "host: the movie plays through a route that declares "
                    + String(format: "%.0f ms", latency * 1000) + " (as Bluetooth headphones do)")
        }
        let handle = try session.openMainStream(descriptor, source: source)
        names[handle.id] = "movie"
        movie = handle
    }

    /// Plays up to `target` (rounded up to whole quanta), doing what is pending on the way.
    func advance(to target: Int) throws {
        while frame < target {
            runPending()
            let nextPending = pending.map(\.frame).filter { $0 > frame }.min() ?? target
            let until = min(target, nextPending)
            let quanta = max(1, (until - frame + quantum - 1) / quantum)
            let quantum = self.quantum
            let offline = playback is OfflinePlayback
            if offline { keepDecodersAhead() }
            try playback.play(quanta: quanta, quantum: quantum) { block in
                // The voice chat's sender must keep reading, or the capture ring fills up.
                _ = session.voiceInput.readAll()
                guard let block else {
                    noteLoudness(at: playback.now)
                    view.tick(
                        time: playback.now, progress: playback.now / scene.duration, levels: gains(),
                        clock: movieClock
                    ) { session.snapshot }
                    return
                }
                let levels = collect(block)
                noteLoudness(at: Double(frame + block.frames) / Double(rate))
                view.tick(
                    time: Double(frame + block.frames) / Double(rate),
                    progress: Double(frame) / Double(rate)
                        / scene.duration, levels: levels, clock: movieClock
                ) { session.snapshot }
                frame += block.frames
                if offline { keepDecodersAhead() }
            }
            if !(playback is OfflinePlayback) { frame += quanta * quantum }
        }
        runPending()
    }

    /// The movie's clocks: what is heard now (the clock a picture follows), what was handed to the
    /// engine, and the main stream's route latency. Offline there is no latency and no real time: the
    /// two clocks are the same.
    private var movieClock: LiveView.MovieClock? {
        guard let source = movieSource else { return nil }
        let offline = playback is OfflinePlayback
        return LiveView.MovieClock(
            heard: SceneRunner.seconds(offline ? source.clock : source.heardClock),
            delivered: SceneRunner.seconds(source.clock),
            latency: movie?.outputLatency.map { SceneRunner.seconds($0) })
    }

    /// Offline, the engine renders far faster than real time and would outrun the decoder threads:
    /// called before every quantum, it waits for a decoder to fill its ring when the ring holds less
    /// than two quanta, or a seek has flushed it.
    private func keepDecodersAhead() {
        let sought = seekPending
        seekPending = false
        for entry in sources where sought || entry.source.bufferedFrames < 2 * quantum {
            if !entry.source.waitUntilBuffered(timeout: .seconds(10)) {
                view.note("\(entry.name): the decoder did not fill its ring within 10 s; going on")
            }
        }
    }

    /// One line per media file: what it is, the decoder's ring, and the underruns in this run.
    func decodingReport(library: MediaLibrary) -> [String] {
        sources.map { entry in
            let info = library.info(of: entry.media).map { "\($0)" } ?? "?"
            let ring = entry.source.bufferFrames
            return "\(entry.name): \(entry.media.written) (\(info)); decoder thread with a ring of \(ring) frames "
                + String(format: "(%.0f ms)", Double(ring) * 1000 / Double(rate))
                + ", \(entry.source.underrunCount) underruns (\(entry.source.underrunFrames) frames)"
        }
    }

    private func runPending() {
        let due = pending.filter { $0.frame <= frame }
        pending.removeAll { $0.frame <= frame }
        for item in due { item.work() }
    }

    /// Adds a quantum's stems to each name's stem and returns the quantum's level per name.
    private func collect(_ block: RenderedAudio) -> [String: Double?] {
        var byName: [String: [Float]] = [:]
        for (id, stem) in block.stems {
            let name = names[id] ?? "other"
            if var sum = byName[name] {
                for index in sum.indices { sum[index] += stem[index] }
                byName[name] = sum
            } else {
                byName[name] = stem
            }
        }
        var levels: [String: Double?] = [:]
        for name in labels {
            // Appended in place: copying a stem out of the dictionary and back would copy all of it
            // every quantum.
            padStem(name, to: frame)
            if let audio = byName[name] {
                stems[name, default: []].append(contentsOf: audio)
                levels[name] = Levels.rmsDBFS(of: audio, frames: 0..<block.frames, channels: channels)
            } else {
                stems[name, default: []].append(contentsOf: repeatElement(0, count: block.frames * channels))
                levels[name] = .some(nil)
            }
        }
        levels["mix"] = Levels.rmsDBFS(of: block.mix, frames: 0..<block.frames, channels: channels)
        return levels
    }

    /// Keeps what the movie's loudness duck measures now, while the watch-party ducks by loudness.
    private func noteLoudness(at time: Double) {
        guard voiceLoudnessDuck != nil || loudnessReadings.last?.reading != nil else { return }
        loudnessReadings.append((time, movie?.loudnessDuck))
    }

    /// The loudness duck over the run, for the plot: the voice's loudness while it speaks and the
    /// movie's as heard (LUFS), whose gap is the margin held, and the depth (dB); none without one.
    func loudnessTracks() -> [LevelTrack] {
        guard loudnessReadings.contains(where: { $0.reading != nil }) else { return [] }
        let method = "BS.1770 loudness the movie's render side measured"
        func track(_ name: String, _ value: (LoudnessDuckReading) -> Float?) -> LevelTrack {
            LevelTrack(
                name: name, points: loudnessReadings.map { ($0.time, $0.reading.flatMap(value).map(Double.init)) },
                method: method)
        }
        return [
            track(LevelPlot.voiceLoudness) { $0.sourceLoudness },
            track(LevelPlot.movieLoudness) { reading in reading.mainLoudness.map { $0 + reading.depth } },
            track(LevelPlot.duckDepth) { $0.depth },
        ]
    }

    /// On a sound server: each stream's gain in dB as its meter (a closed stream's reads silent).
    private func gains() -> [String: Double?] {
        var levels: [String: Double?] = [:]
        for name in labels { levels[name] = .some(nil) }
        for info in session.snapshot.streams {
            let name = names[info.id] ?? info.descriptor.name
            levels[name] = info.gain > 0 && !info.isPaused ? 20 * log10(Double(info.gain)) : .some(nil)
        }
        return levels
    }

    func lanes(endingAt end: Double) -> [SceneRun.Lane] {
        for (name, start) in laneStarts { laneSpans[name, default: []].append(start...end) }
        laneStarts = [:]
        let order = [
            "feed clip", "voice chat", "notification", "other app", "background", "screen locked",
            "interruption", "movie paused",
        ]
        return order.compactMap { name in laneSpans[name].map { SceneRun.Lane(name: name, spans: $0) } }
    }

    func closeEverything() {
        for item in pending { item.work() }
        pending = []
        feed?.close()
        voice?.close()
        for handle in notifications { handle.close() }
        for duck in notificationDucks { duck.release() }
        if feedBridge.heldCounts.ducks > 0 { feedBridge.disableAudioDucking() }
        while feedBridge.heldCounts.generic > 0 { feedBridge.disableAudioSession(for: .generic) }
        if voiceBridge.heldCounts.ducks > 0 { voiceBridge.disableAudioDucking() }
        voiceLoudnessDuck?.release()
        voiceLoudnessDuck = nil
        while voiceBridge.heldCounts.voice > 0 { voiceBridge.disableAudioSession(for: .voice) }
        try? voiceHelper?.leave()
        voiceHelper = nil
        movie?.close()
        latencySink?.close()
        gstreamer?.stop()
        hostLease?.release()
        for name in labels {
            padStem(name, to: frame)
        }
    }

    /// Pads the stem of `name` with silence up to `frame`, for the time before its stream opened.
    private func padStem(_ name: String, to frame: Int) {
        let missing = frame * channels - (stems[name]?.count ?? 0)
        if missing > 0 { stems[name, default: []].append(contentsOf: repeatElement(0, count: missing)) }
    }
}
