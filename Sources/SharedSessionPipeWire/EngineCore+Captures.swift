import SharedSession

/// The engine's two captures, each a ``CaptureSlot``: the voice input for the voice configuration, and
/// a sink's monitor for tests and benchmarks that measure what was played.
extension EngineCore {
    func startCapture(into ring: AudioRingBuffer) throws(SessionError) {
        try checkNotShutDown("start the voice capture")
        defer { reschedule() }
        try startVoice(into: ring)
    }

    func stopCapture() {
        voice.stop()
        echo.unload()
        reschedule()
    }

    /// Records what a sink plays (its monitor): `target` names the sink, nil the default one.
    func startMonitor(into ring: AudioRingBuffer, target: String?) throws(SessionError) {
        try checkNotShutDown("record the sink")
        defer { reschedule() }
        try monitor.start(into: ring, target: target, core: core, observer: self)
    }

    func stopMonitor() {
        monitor.stop()
        reschedule()
    }
}
