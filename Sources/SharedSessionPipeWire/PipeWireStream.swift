internal import CPipeWire
internal import CPipeWireShim
import SharedSession

/// What a stream reports to its owner, on the loop thread with the loop lock held.
protocol StreamObserver: AnyObject {
    func stream(_ stream: PipeWireStream, changedFrom old: pw_stream_state, to new: pw_stream_state, error: String?)
    func stream(_ stream: PipeWireStream, volumesChanged volumes: [Float])
}

/// One `pw_stream`, from `pw_stream_new` to `pw_stream_destroy`. A reconnection makes a new one
/// for the same ``StreamID``; the gain and pause state survive in the `StreamRenderer`.
///
/// Playback streams render with their `StreamRenderer` in the process callback; capture streams
/// copy what they receive into an `AudioRingBuffer`. The process callback runs on PipeWire's
/// real-time data thread: it touches only `let` properties, atomics and the buffers PipeWire hands
/// it, and never locks, allocates or logs.
final class PipeWireStream {
    enum Kind {
        case playback(StreamRenderer)
        case capture(AudioRingBuffer)
        /// The overlay bus of the mixed layout: every overlay's renderer into one buffer.
        case bus(OverlayBus)
    }

    let id: StreamID?
    let kind: Kind
    let name: String
    private let stream: OpaquePointer
    private let shared: RealtimeShared
    private let channels: Int
    private let sampleRate: Int
    /// What the process callback found about the stream's timing (playback streams).
    let timing = StreamTiming()
    private let listener: Listener<pw_stream_events>
    weak var observer: (any StreamObserver)?

    // Loop thread only.
    private(set) var state = PW_STREAM_STATE_UNCONNECTED
    /// What its state changes and volume reports mean, from its connection on.
    var health = StreamHealth(connectedAt: .now)
    /// The channel volume the engine set last; a different one came from outside.
    private(set) var ownVolume: Float = 1

    /// Creates and connects the stream. Call with the loop lock held.
    init(
        core: OpaquePointer, id: StreamID?, kind: Kind, name: String, properties: [(String, String)],
        format: AudioFormat, shared: RealtimeShared
    ) throws(SessionError) {
        let props = CPipeWireShim_propertiesNew()
        for (key, value) in properties {
            pw_properties_set(props, key, value)
        }
        guard let stream = pw_stream_new(core, name, props) else {
            throw .pipeWire(.streamRefused, "pw_stream_new for \(name) failed", result: -Int32(errno))
        }
        self.stream = stream
        self.id = id
        self.kind = kind
        self.name = name
        self.shared = shared
        self.channels = format.channels
        self.sampleRate = format.sampleRate
        listener = Listener(pw_stream_events()) { Self.fillEvents($0, kind: kind) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        listener.add { pw_stream_add_listener(stream, $0, $1, context) }

        let podBuffer = UnsafeMutableRawPointer.allocate(byteCount: 1024, alignment: 8)
        defer { podBuffer.deallocate() }
        guard
            let pod = CPipeWireShim_buildAudioFormat(
                podBuffer, 1024, UInt32(format.sampleRate), UInt32(format.channels))
        else {
            pw_stream_destroy(stream)
            streamDestroyed()
            throw SessionError(
                code: .invalidValue,
                message: "format \(format) cannot be described to PipeWire: use AudioFormat.standard")
        }
        var params: [UnsafePointer<spa_pod>?] = [pod]
        let direction: spa_direction
        if case .capture = kind { direction = SPA_DIRECTION_INPUT } else { direction = SPA_DIRECTION_OUTPUT }
        let flags = pw_stream_flags(
            PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue
                | PW_STREAM_FLAG_RT_PROCESS.rawValue)
        let result = params.withUnsafeMutableBufferPointer {
            pw_stream_connect(stream, direction, CPipeWireShim_idAny, flags, $0.baseAddress, 1)
        }
        guard result >= 0 else {
            pw_stream_destroy(stream)
            streamDestroyed()
            throw .pipeWire(.streamRefused, "pw_stream_connect for \(name) failed", result: result)
        }
    }

    deinit {
        // destroy() must have run; this only guards against a leak in a path that forgot it.
        assert(destroyed, "PipeWireStream \(name) freed without destroy()")
    }

    private var destroyed = false

    /// The stream was destroyed, and its listener list with it: the listener's memory may go with this
    /// object.
    private func streamDestroyed() {
        destroyed = true
        listener.objectDestroyed()
    }

    /// Disconnects and frees the stream. After it returns the process callback no longer runs.
    /// Call with the loop lock held.
    func destroy() {
        guard !destroyed else { return }
        // Being torn down takes the stream through PAUSED; with the observer still attached that
        // read as the server pausing it, a false fault on every close.
        observer = nil
        pw_stream_destroy(stream)
        streamDestroyed()
    }

    /// Sets the stream's own PipeWire volume on every channel. The engine keeps it at 1: gains are
    /// ramped per sample by the renderer, never stepped by PipeWire.
    func setChannelVolume(_ volume: Float) -> Int32 {
        ownVolume = volume
        return CPipeWireShim_setChannelVolumes(stream, UInt32(channels), volume)
    }

    // MARK: Callbacks (loop thread, lock held; process on the data thread)

    fileprivate func stateChanged(from old: pw_stream_state, to new: pw_stream_state, error: String?) {
        state = new
        observer?.stream(self, changedFrom: old, to: new, error: error)
    }

    fileprivate func controlInfo(id: UInt32, control: UnsafePointer<pw_stream_control>) {
        if id == CPipeWireShim_propVolume, control.pointee.n_values > 0, let value = control.pointee.values?[0],
            value != 1
        {
            // Nobody's mixer sets it: WirePlumber restoring a `volume` saved from another stream with the
            // same key (a player another host ducked through it and never gave back). Held at 1 like the
            // channel volumes.
            _ = CPipeWireShim_setStreamVolume(stream, 1)
            return
        }
        guard id == CPipeWireShim_propChannelVolumes, let values = control.pointee.values else { return }
        let volumes = (0..<Int(control.pointee.n_values)).map { values[$0] }
        observer?.stream(self, volumesChanged: volumes)
    }

    /// Real-time: renders one quantum with the stream's renderer, or with `bus` every overlay's.
    @inline(__always)
    fileprivate func processPlayback(_ renderer: StreamRenderer?, bus: OverlayBus? = nil) {
        guard let buffer = pw_stream_dequeue_buffer(stream) else { return }
        let data = buffer.pointee.buffer.pointee.datas!
        if let base = data.pointee.data {
            let stride = channels &* 4
            let capacity = Int(data.pointee.maxsize) / stride
            var frames = Int(truncatingIfNeeded: buffer.pointee.requested)
            if frames == 0 || frames > capacity { frames = capacity }
            let output = base.assumingMemoryBound(to: Float.self)
            let suspended = shared.suspended.load(ordering: .relaxed)
            // When this buffer's first frame is heard: read before it is queued, as stream.h says.
            var time = pw_time()
            let heard =
                pw_stream_get_time_n(stream, &time, MemoryLayout<pw_time>.size) == 0
                ? timing.note(
                    LatencyReading(
                        now: time.now, rateNumerator: time.rate.num, rateDenominator: time.rate.denom,
                        delay: time.delay, queued: time.queued, buffered: time.buffered, frames: frames),
                    sampleRate: sampleRate) : nil
            if let renderer {
                if let heard { renderer.publishOutputLatency(nanoseconds: heard.latency) }
                renderer.render(
                    into: output, frames: frames, accumulate: false, suspended: suspended, heardAt: heard?.heardAt)
            } else if let bus {
                bus.render(into: output, frames: frames, suspended: suspended, heard: heard)
            }
            // `queued` counts frames: what the graph has not taken yet of what this stream queued.
            buffer.pointee.size = UInt64(frames)
            let chunk = data.pointee.chunk!
            chunk.pointee.offset = 0
            chunk.pointee.stride = Int32(stride)
            chunk.pointee.size = UInt32(truncatingIfNeeded: frames &* stride)
            shared.noteCycle(frames: frames, thread: UInt(pthread_self()))
        }
        pw_stream_queue_buffer(stream, buffer)
    }

    /// Real-time: copies one received buffer into the ring (frames that do not fit are dropped).
    @inline(__always)
    fileprivate func processCapture(_ ring: AudioRingBuffer) {
        guard let buffer = pw_stream_dequeue_buffer(stream) else { return }
        let data = buffer.pointee.buffer.pointee.datas!
        if let base = data.pointee.data, let chunk = data.pointee.chunk {
            let maxSize = Int(data.pointee.maxsize)
            let offset = min(Int(chunk.pointee.offset), maxSize)
            let size = min(Int(chunk.pointee.size), maxSize &- offset)
            let samples = size / 4
            let start = (base + offset).assumingMemoryBound(to: Float.self)
            // An interruption silences the voice input too, as the offline engine does.
            if !shared.suspended.load(ordering: .relaxed) {
                _ = ring.write(UnsafeBufferPointer(start: start, count: samples))
            }
            shared.captureQuantum.store(samples / max(channels, 1), ordering: .relaxed)
            if shared.dataThread.load(ordering: .relaxed) == 0 {
                shared.dataThread.store(UInt(pthread_self()), ordering: .relaxed)
            }
        }
        pw_stream_queue_buffer(stream, buffer)
    }

    // C callbacks: written in nonisolated code so Swift's isolation check never traps on PipeWire's threads.
    private static func fillEvents(_ events: UnsafeMutablePointer<pw_stream_events>, kind: Kind) {
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.state_changed = { data, old, new, error in
            guard let data else { return }
            let stream = Unmanaged<PipeWireStream>.fromOpaque(data).takeUnretainedValue()
            stream.stateChanged(from: old, to: new, error: error.map { String(cString: $0) })
        }
        events.pointee.control_info = { data, id, control in
            guard let data, let control else { return }
            Unmanaged<PipeWireStream>.fromOpaque(data).takeUnretainedValue().controlInfo(id: id, control: control)
        }
        switch kind {
        case .playback:
            events.pointee.process = { data in
                guard let data else { return }
                let stream = Unmanaged<PipeWireStream>.fromOpaque(data).takeUnretainedValue()
                if case .playback(let renderer) = stream.kind { stream.processPlayback(renderer) }
            }
        case .bus:
            events.pointee.process = { data in
                guard let data else { return }
                let stream = Unmanaged<PipeWireStream>.fromOpaque(data).takeUnretainedValue()
                if case .bus(let bus) = stream.kind { stream.processPlayback(nil, bus: bus) }
            }
        case .capture:
            events.pointee.process = { data in
                guard let data else { return }
                let stream = Unmanaged<PipeWireStream>.fromOpaque(data).takeUnretainedValue()
                if case .capture(let ring) = stream.kind { stream.processCapture(ring) }
            }
        }
    }
}

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif
