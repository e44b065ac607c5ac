import Synchronization

/// An engine with no sound server: a real mixer that renders when it is asked to.
///
/// It pulls every open stream's source through the same ``StreamRenderer`` the PipeWire engine
/// uses, applies each stream's gain with a per-sample ramp, and mixes interleaved Float32 at the
/// format's rate. Nothing runs by itself: ``render(frames:)`` advances time by one quantum of any
/// size from 1 to 8192 frames, and the quantum may change from one call to the next (a locked screen
/// raises it from 1024 to 4096). Tests measure levels in what it renders; the main job writes it to a
/// WAV file; a machine without a sound server can use it as its engine.
///
/// ``render(frames:)`` is meant to be driven by one thread at a time (a test, a render loop). It
/// takes a lock once per call to find the open streams, and allocates the arrays it returns; the
/// per-stream kernel inside it is the real-time one.
///
/// ## Sources that decode on a thread of their own
/// Before each render call the engine waits for every stream that will pull its source (playing,
/// or still fading out of a pause; not while suspended) with ``AudioSource/waitUntilReady(frames:timeout:)``:
/// a media source that decodes on its own thread is given the time it needs, so rendering right
/// after opening it, or right after a seek, plays the file and never underruns, however much faster
/// than real time the engine renders. A source that is not ready within ``readinessTimeout`` fails
/// the render call with its error, prefixed by the stream's name: never a silent underrun.
///
/// ## Its timeline
/// The engine has no latency: the frames of a render call are heard at the instant its timeline has
/// reached, ``timelineOrigin`` plus the frames rendered before the call, and each stream's
/// ``StreamControl/outputLatency`` is zero. A source's clock at the ear
/// (``AudioSource/render(into:frames:heardAt:)``) is therefore exact by construction: at
/// ``instant(afterFrames:)`` of the frames rendered so far it reads what the source rendered.
public final class OfflineEngine: AudioEngine {
    public let format: AudioFormat
    /// What the voice capture stream records while capturing: a microphone stand-in. It reaches the
    /// session's ``SharedSession/voiceInput`` unchanged, whatever the configuration's mode: the offline
    /// engine does no voice processing and no echo cancellation, even for `voiceChat`
    /// (``AudioSessionMode/usesVoiceProcessing``); nothing it plays is heard by its input.
    public let input: (any AudioSource)?
    /// How long a render call waits for one stream's source to be ready before it throws.
    public let readinessTimeout: Duration
    /// The instant on the monotonic clock at which the engine's first frame is heard (see the type's
    /// discussion).
    public let timelineOrigin: MonotonicInstant

    private struct Streams {
        var order: [StreamID] = []
        var renderers: [StreamID: StreamRenderer] = [:]
        var descriptors: [StreamID: StreamDescriptor] = [:]
    }

    private struct Control {
        var configuration: SessionConfiguration?
        var activations = 0
        var capture: AudioRingBuffer?
        var handler: (@Sendable (EngineEvent) -> Void)?
        var recording: [Float]?
        var framesRendered = 0
        var loudnessReports = LoudnessDuckReports()
    }

    private let streams = Locked(Streams())
    private let control = Locked(Control())
    private let suspended = Atomic<Bool>(false)
    private let lastQuantum = Atomic<Int>(0)

    /// Creates an engine; `input` is what a voice session's capture records. A render call waits up
    /// to `readinessTimeout` for each stream's source to be ready (see the type's discussion). Its
    /// first frame is heard at `timelineOrigin` (by default the instant it is made; a test that wants
    /// the same instants on every run passes ``MonotonicInstant/zero``).
    public init(
        format: AudioFormat = .standard, input: (any AudioSource)? = nil, readinessTimeout: Duration = .seconds(10),
        timelineOrigin: MonotonicInstant = .now
    ) {
        self.format = format
        self.timelineOrigin = timelineOrigin
        self.input = input
        self.readinessTimeout = readinessTimeout
    }

    public var quantum: Int { lastQuantum.load(ordering: .relaxed) }

    /// The configuration the session activated, or `nil` while inactive.
    public var activeConfiguration: SessionConfiguration? { control.withLock { $0.configuration } }

    /// Whether voice input is being captured.
    public var isCapturing: Bool { control.withLock { $0.capture != nil } }

    /// Whether rendering is suspended (every stream silent).
    public var isSuspended: Bool { suspended.load(ordering: .relaxed) }

    /// Frames rendered since the engine was made.
    public var framesRendered: Int { control.withLock { $0.framesRendered } }

    /// The instant on the engine's timeline at which the frame `frames` frames after its first is
    /// heard: ``timelineOrigin`` plus their duration, to the nanosecond.
    public func instant(afterFrames frames: Int) -> MonotonicInstant {
        timelineOrigin + format.duration(ofFrames: frames)
    }

    /// The open streams, in the order they were opened.
    public var openStreams: [StreamID] { streams.withLock { $0.order } }

    /// The gain a stream's render side has reached, or `nil` if it is not open.
    public func currentGain(of stream: StreamID) -> Float? {
        streams.withLock { $0.renderers[stream]?.currentGain }
    }

    // MARK: AudioEngine

    public func setEventHandler(_ handler: @escaping @Sendable (EngineEvent) -> Void) {
        control.withLock { $0.handler = handler }
    }

    public func activate(_ configuration: SessionConfiguration) throws(SessionError) {
        control.withLock {
            $0.configuration = configuration
            $0.activations += 1
        }
    }

    public func deactivate(notifyingOthers: Bool) {
        control.withLock { $0.configuration = nil }
    }

    public func openStream(
        _ id: StreamID, descriptor: StreamDescriptor, source: any AudioSource, gain: Float, paused: Bool
    ) throws(SessionError) -> any StreamControl {
        let renderer = StreamRenderer(source: source, gain: gain, paused: paused, format: format)
        renderer.publishOutputLatency(nanoseconds: 0)
        try streams.withLock { streams throws(SessionError) in
            guard streams.renderers[id] == nil else {
                throw SessionError(code: .streamRefused, message: "\(id) is already open on this engine")
            }
            streams.order.append(id)
            streams.renderers[id] = renderer
            streams.descriptors[id] = descriptor
        }
        return renderer
    }

    public func closeStream(_ id: StreamID) {
        streams.withLock { streams in
            streams.order.removeAll { $0 == id }
            streams.renderers[id] = nil
            streams.descriptors[id] = nil
        }
        control.withLock { $0.loudnessReports.forget(id) }
    }

    public func setSuspended(_ suspended: Bool) {
        self.suspended.store(suspended, ordering: .relaxed)
    }

    public func startCapture(into ring: AudioRingBuffer) throws(SessionError) {
        guard ring.channels == format.channels else {
            throw SessionError(
                code: .streamRefused,
                message: "capture ring has \(ring.channels) channels, the engine \(format.channels): "
                    + "make the ring with the engine's channel count")
        }
        control.withLock { $0.capture = ring }
    }

    public func stopCapture() {
        control.withLock { $0.capture = nil }
    }

    // MARK: Driving by hand

    /// Renders one quantum of `frames` frames: every stream's output (its stem) and their mix. It
    /// first waits for the sources of the streams that will pull (see the type's discussion).
    ///
    /// - Throws: ``SessionError`` with code `quantumOutOfRange` unless `frames` is 1 through 8192; the
    ///   error of a source not ready within ``readinessTimeout``, its message starting with the
    ///   stream's name (nothing of that quantum is rendered).
    public func render(frames: Int) throws(SessionError) -> RenderedAudio {
        try render(frames: frames, isQuantum: true)
    }

    /// `isQuantum` is false for the shorter last block of ``render(duration:quantum:)``, which is not a
    /// change of the engine's quantum.
    private func render(frames: Int, isQuantum: Bool) throws(SessionError) -> RenderedAudio {
        guard frames >= 1, frames <= AudioFormat.maximumQuantum else {
            throw SessionError(
                code: .quantumOutOfRange,
                message: "render(frames: \(frames)): a quantum must be 1 through \(AudioFormat.maximumQuantum) frames")
        }
        let channels = format.channels
        let handler = control.withLock { $0.handler }
        if isQuantum {
            // Reported before the quantum renders, as a graph announces its new size before the cycle.
            let previous = lastQuantum.exchange(frames, ordering: .relaxed)
            // The first quantum is reported too, as a sound server reports the graph's starting one.
            if previous != frames { handler?(.quantumChanged(frames: frames)) }
        }
        let opened = streams.withLock { streams in
            streams.order.compactMap { id in streams.renderers[id].map { (id, $0) } }
        }
        // Streams that follow others' activity render last, so they hear this quantum's activity of
        // the streams they follow (and of the capture, recorded first): sample-accurate ducking.
        let active = opened.filter { !$0.1.followsActivity } + opened.filter { $0.1.followsActivity }
        let isSuspended = suspended.load(ordering: .relaxed)
        let capture = control.withLock { $0.capture }
        if !isSuspended {
            // Offline rendering may block: a source that decodes on its own thread gets the time it needs.
            for (id, renderer) in active where !renderer.isPaused || renderer.isAudible {
                try waitUntilReady(renderer.source, frames: frames, named: "\(id)")
            }
            if capture != nil, let input { try waitUntilReady(input, frames: frames, named: "the capture input") }
        }
        if let capture, let input, !isSuspended {
            var recorded = [Float](repeating: 0, count: frames * channels)
            let got = recorded.withUnsafeMutableBufferPointer { input.render(into: $0.baseAddress!, frames: frames) }
            _ = recorded.withUnsafeBufferPointer {
                capture.write(UnsafeBufferPointer(rebasing: $0[0..<got * channels]))
            }
        }
        var mix = [Float](repeating: 0, count: frames * channels)
        var stems: [StreamID: [Float]] = [:]
        let heardAt = instant(afterFrames: control.withLock { $0.framesRendered })
        for (id, renderer) in active {
            var stem = [Float](repeating: 0, count: frames * channels)
            stem.withUnsafeMutableBufferPointer { buffer in
                renderer.render(
                    into: buffer.baseAddress!, frames: frames, accumulate: false, suspended: isSuspended,
                    heardAt: heardAt)
            }
            for index in mix.indices { mix[index] += stem[index] }
            stems[id] = stem
        }
        control.withLock { control in
            control.framesRendered += frames
            control.recording?.append(contentsOf: mix)
        }
        // A loudness duck that was set, removed or moved by a dB in this quantum is reported after it.
        let reports = control.withLock { control in
            active.compactMap { id, renderer in control.loudnessReports.event(for: renderer.loudnessDuck, of: id) }
        }
        for event in reports { handler?(event) }
        return RenderedAudio(frames: frames, mix: mix, stems: stems)
    }

    private func waitUntilReady(_ source: any AudioSource, frames: Int, named name: String) throws(SessionError) {
        do {
            try source.waitUntilReady(frames: frames, timeout: readinessTimeout)
        } catch {
            throw SessionError(code: error.code, message: "\(name) is not ready to render: \(error.message)")
        }
    }

    /// Renders `duration` in quanta of `quantum` frames (the last one shorter) and returns it joined.
    public func render(duration: Duration, quantum: Int = 1024) throws(SessionError) -> RenderedAudio {
        var remaining = format.frames(in: duration)
        var mix: [Float] = []
        var stems: [StreamID: [Float]] = [:]
        var total = 0
        while remaining > 0 {
            let block = try render(frames: min(quantum, remaining), isQuantum: remaining >= quantum)
            mix.append(contentsOf: block.mix)
            for (id, stem) in block.stems { stems[id, default: []].append(contentsOf: stem) }
            remaining -= block.frames
            total += block.frames
        }
        return RenderedAudio(frames: total, mix: mix, stems: stems)
    }

    /// Starts keeping every rendered mix, for ``stopRecording()`` or a WAV file.
    public func startRecording() {
        control.withLock { $0.recording = [] }
    }

    /// Stops keeping the mix and returns what was kept.
    @discardableResult
    public func stopRecording() -> [Float] {
        control.withLock { control in
            defer { control.recording = nil }
            return control.recording ?? []
        }
    }

    /// Reports `event` to the session as if the platform had observed it (an other app's audio, a
    /// route change, a fault), synchronously on the calling thread.
    public func post(_ event: EngineEvent) {
        let handler = control.withLock { $0.handler }
        handler?(event)
    }
}
