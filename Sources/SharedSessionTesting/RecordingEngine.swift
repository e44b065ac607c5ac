public import SharedSession
import Synchronization

/// A fake engine that records every call the session makes, keeps the state those calls leave, and
/// can be told to refuse: for tests of code that drives a `SharedSession` without rendering audio.
public final class RecordingEngine: AudioEngine {
    /// One call the session made.
    public enum Call: Sendable, Hashable, CustomStringConvertible {
        case activate(SessionConfiguration)
        case deactivate(notifyingOthers: Bool)
        case openStream(StreamID, name: String, gain: Float, paused: Bool)
        case closeStream(StreamID)
        case setGain(StreamID, gain: Float, ramp: Duration)
        case setPaused(StreamID, paused: Bool)
        /// A voice-activity duck: the gain while active and how many meters it follows.
        case setActivityDuck(StreamID, gain: Float, following: Int)
        case setSuspended(Bool)
        case startCapture
        case stopCapture

        public var description: String {
            switch self {
            case .activate(let configuration): "activate(\(configuration))"
            case .deactivate(let notify): "deactivate(notifyingOthers: \(notify))"
            case .openStream(let id, let name, let gain, let paused):
                "openStream(\(id) \(name), gain: \(gain), paused: \(paused))"
            case .closeStream(let id): "closeStream(\(id))"
            case .setGain(let id, let gain, let ramp): "setGain(\(id), \(gain), ramp: \(ramp))"
            case .setPaused(let id, let paused): "setPaused(\(id), \(paused))"
            case .setActivityDuck(let id, let gain, let count): "setActivityDuck(\(id), \(gain), following: \(count))"
            case .setSuspended(let suspended): "setSuspended(\(suspended))"
            case .startCapture: "startCapture"
            case .stopCapture: "stopCapture"
            }
        }
    }

    private struct Storage {
        var calls: [Call] = []
        var handler: (@Sendable (EngineEvent) -> Void)?
        var configuration: SessionConfiguration?
        var gains: [StreamID: Float] = [:]
        var paused: [StreamID: Bool] = [:]
        var suspended = false
        var capturing = false
        var refusedCategories: [AudioSessionCategory: String] = [:]
        var refuseCapture: String?
        var refuseStreams: String?
        var quantum = 1024
    }

    private let storage = Locked(Storage())
    public let format: AudioFormat

    /// Creates a fake engine.
    public init(format: AudioFormat = .standard) {
        self.format = format
    }

    /// Every call so far, in order.
    public var calls: [Call] { storage.withLock { $0.calls } }
    /// Forgets the calls recorded so far (the state they left stays).
    public func removeAllCalls() { storage.withLock { $0.calls.removeAll() } }
    /// The configuration last activated, or `nil` while inactive.
    public var activeConfiguration: SessionConfiguration? { storage.withLock { $0.configuration } }
    /// The last gain set for each open stream.
    public var gains: [StreamID: Float] { storage.withLock { $0.gains } }
    /// The pause state of each open stream.
    public var paused: [StreamID: Bool] { storage.withLock { $0.paused } }
    /// Whether rendering is suspended.
    public var isSuspended: Bool { storage.withLock { $0.suspended } }
    /// Whether capture is running.
    public var isCapturing: Bool { storage.withLock { $0.capturing } }

    /// Makes ``activate(_:)`` throw for `category` with `message` (or stop refusing with `nil`).
    public func refuseActivation(of category: AudioSessionCategory, message: String?) {
        storage.withLock { $0.refusedCategories[category] = message }
    }

    /// Makes ``startCapture(into:)`` throw with `message` (or stop refusing with `nil`).
    public func refuseCapture(message: String?) {
        storage.withLock { $0.refuseCapture = message }
    }

    /// Makes ``openStream(_:descriptor:source:gain:paused:)`` throw with `message` (or stop with `nil`).
    public func refuseStreams(message: String?) {
        storage.withLock { $0.refuseStreams = message }
    }

    /// Sends `event` to the session synchronously, as an engine thread would.
    public func emit(_ event: EngineEvent) {
        let handler = storage.withLock { $0.handler }
        handler?(event)
    }

    public var quantum: Int { storage.withLock { $0.quantum } }

    public func setEventHandler(_ handler: @escaping @Sendable (EngineEvent) -> Void) {
        storage.withLock { $0.handler = handler }
    }

    public func activate(_ configuration: SessionConfiguration) throws(SessionError) {
        try storage.withLock { storage throws(SessionError) in
            storage.calls.append(.activate(configuration))
            if let message = storage.refusedCategories[configuration.category] {
                throw SessionError(code: .activationRefused, message: message)
            }
            storage.configuration = configuration
        }
    }

    public func deactivate(notifyingOthers: Bool) {
        storage.withLock {
            $0.calls.append(.deactivate(notifyingOthers: notifyingOthers))
            $0.configuration = nil
        }
    }

    public func openStream(
        _ id: StreamID, descriptor: StreamDescriptor, source: any AudioSource, gain: Float, paused: Bool
    ) throws(SessionError) -> any StreamControl {
        try storage.withLock { storage throws(SessionError) in
            storage.calls.append(.openStream(id, name: descriptor.name, gain: gain, paused: paused))
            if let message = storage.refuseStreams {
                throw SessionError(code: .streamRefused, message: message)
            }
            storage.gains[id] = gain
            storage.paused[id] = paused
        }
        return Control(engine: self, stream: id)
    }

    public func closeStream(_ id: StreamID) {
        storage.withLock {
            $0.calls.append(.closeStream(id))
            $0.gains[id] = nil
            $0.paused[id] = nil
        }
    }

    /// A stream's control: records its calls in the engine's list, as `setGain` and `setPaused`.
    private final class Control: StreamControl {
        let engine: RecordingEngine
        let stream: StreamID

        init(engine: RecordingEngine, stream: StreamID) {
            self.engine = engine
            self.stream = stream
        }

        func setGain(_ gain: Float, ramp: Duration) {
            engine.storage.withLock {
                $0.calls.append(.setGain(stream, gain: gain, ramp: ramp))
                if $0.gains[stream] != nil { $0.gains[stream] = gain }
            }
        }

        func setPaused(_ paused: Bool) {
            engine.storage.withLock {
                $0.calls.append(.setPaused(stream, paused: paused))
                if $0.paused[stream] != nil { $0.paused[stream] = paused }
            }
        }

        let meter = ActivityMeter()

        func activityMeter() -> ActivityMeter? { meter }

        func setActivityDuck(gain: Float, following meters: [ActivityMeter], attack: Duration, release: Duration) {
            engine.storage.withLock { $0.calls.append(.setActivityDuck(stream, gain: gain, following: meters.count)) }
        }
    }

    public func setSuspended(_ suspended: Bool) {
        storage.withLock {
            $0.calls.append(.setSuspended(suspended))
            $0.suspended = suspended
        }
    }

    public func startCapture(into ring: AudioRingBuffer) throws(SessionError) {
        try storage.withLock { storage throws(SessionError) in
            storage.calls.append(.startCapture)
            if let message = storage.refuseCapture {
                throw SessionError(code: .streamRefused, message: message)
            }
            storage.capturing = true
        }
    }

    public func stopCapture() {
        storage.withLock {
            $0.calls.append(.stopCapture)
            $0.capturing = false
        }
    }
}
