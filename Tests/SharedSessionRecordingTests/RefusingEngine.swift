import SharedSession
import Synchronization

/// An offline engine that refuses as many activations, voice captures and stream opens as it is
/// told to, the way a sound server refuses a configuration, a microphone or a stream it cannot give.
final class RefusingEngine: AudioEngine {
    let offline = OfflineEngine()
    private let refusals = Mutex((activations: 0, captures: 0, opens: 0))

    /// Refuses the next `count` activations.
    func refuseActivations(_ count: Int) { refusals.withLock { $0.activations = count } }

    /// Refuses the next `count` voice captures.
    func refuseCaptures(_ count: Int) { refusals.withLock { $0.captures = count } }

    /// Refuses the next `count` stream opens.
    func refuseOpens(_ count: Int) { refusals.withLock { $0.opens = count } }

    /// Counts one refusal off `count`; whether there was one to give.
    private static func take(_ count: inout Int) -> Bool {
        defer { count = max(0, count - 1) }
        return count > 0
    }

    var format: AudioFormat { offline.format }
    var quantum: Int { offline.quantum }
    func setEventHandler(_ handler: @escaping @Sendable (EngineEvent) -> Void) { offline.setEventHandler(handler) }
    func activate(_ configuration: SessionConfiguration) throws(SessionError) {
        if refusals.withLock({ Self.take(&$0.activations) }) {
            throw SessionError(code: .activationRefused, message: "the device is busy with a phone call")
        }
        try offline.activate(configuration)
    }
    func deactivate(notifyingOthers: Bool) { offline.deactivate(notifyingOthers: notifyingOthers) }
    func openStream(
        _ id: StreamID, descriptor: StreamDescriptor, source: any AudioSource, gain: Float, paused: Bool
    ) throws(SessionError) -> any StreamControl {
        if refusals.withLock({ Self.take(&$0.opens) }) {
            throw SessionError(code: .streamRefused, message: "the sound server has no room for \(descriptor.name)")
        }
        return try offline.openStream(id, descriptor: descriptor, source: source, gain: gain, paused: paused)
    }
    func closeStream(_ id: StreamID) { offline.closeStream(id) }
    func setSuspended(_ suspended: Bool) { offline.setSuspended(suspended) }
    func startCapture(into ring: AudioRingBuffer) throws(SessionError) {
        if refusals.withLock({ Self.take(&$0.captures) }) {
            throw SessionError(code: .streamRefused, message: "no microphone is connected")
        }
        try offline.startCapture(into: ring)
    }
    func stopCapture() { offline.stopCapture() }
}
