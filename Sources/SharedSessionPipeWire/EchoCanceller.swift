internal import CPipeWire
internal import CPipeWireShim
import Logging
import SharedSession

/// PipeWire's echo canceller (`libpipewire-module-echo-cancel` with its WebRTC canceller), loaded into
/// the engine's own context while a voice configuration that asks for voice processing records input.
///
/// The module makes three nodes, each named after the engine's prefix: a capture of the default source
/// (the microphone), a capture of the default sink's monitor (the reference: everything the sink plays,
/// the session's streams first of all; `monitor.mode`) and a source with the microphone's signal minus
/// the echo of the reference. The engine's voice capture then records that source instead of the
/// default one. The module talks to the daemon over a connection of its own; when the daemon goes away
/// the module destroys itself, and the engine loads it again when it reconnects.
/// Its two waits (the retry after the module went away, the voice capture's wait for the module's
/// source) are deadlines the engine's one timer is armed for (``nextDue``, ``housekeeping(at:)``).
/// Loop thread (or the loop lock held) only.
final class EchoCanceller {
    /// The module's file name.
    static let moduleName = "libpipewire-module-echo-cancel"
    /// How long after the module went away on its own (the connection intact) it is loaded again.
    static let retryDelay = Duration.milliseconds(250)

    private let context: OpaquePointer
    private let remoteName: String?
    private let logger: Logger
    let nodePrefix: String
    let applicationName: String
    /// The module while loaded (a `CPipeWireShim_Module`).
    private var handle: OpaquePointer?
    /// When the module is loaded again after it went away on its own while it was wanted.
    private var retryAt: ContinuousClock.Instant?
    /// When the voice capture stops waiting for the module's source to appear in the registry.
    private var sourceWaitEnds: ContinuousClock.Instant?
    /// Told when a deadline was set, so the engine arms its timer for it.
    var deadlinesChanged: (() -> Void)?
    /// Whether the voice capture waits for the module's source (its node is made when it appears, or
    /// after ``sourceWaitLimit`` whatever happens).
    private(set) var isAwaitingSource = false
    /// The longest the voice capture waits for the module's source before it is made anyway.
    static let sourceWaitLimit = Duration.seconds(2)
    /// What to do when the source appeared or the wait is over: make the voice capture's node.
    var sourceReady: (() -> Void)?
    /// What to do when the module went away on its own and the retry is due: load it again and make
    /// the voice capture again through it.
    var reload: (() -> Void)?

    init(context: OpaquePointer, remoteName: String?, nodePrefix: String, applicationName: String, logger: Logger) {
        self.context = context
        self.remoteName = remoteName
        self.nodePrefix = nodePrefix
        self.applicationName = applicationName
        self.logger = logger
    }

    /// The next of its deadlines, for the engine's timer.
    var nextDue: ContinuousClock.Instant? {
        [retryAt, sourceWaitEnds].compactMap { $0 }.min()
    }

    /// Runs what is due at `now`: the retry's reload, the end of the wait for the source.
    func housekeeping(at now: ContinuousClock.Instant) {
        if let retryAt, retryAt <= now {
            self.retryAt = nil
            reload?()
        }
        if let sourceWaitEnds, sourceWaitEnds <= now { sourceAppeared() }
    }

    /// The voice capture's node waits until the module's source is in the registry: made before, it
    /// would be linked by the session manager to the default source (the microphone, uncancelled) and
    /// was seen to stay there.
    func awaitSource() {
        isAwaitingSource = true
        sourceWaitEnds = .now + Self.sourceWaitLimit
        deadlinesChanged?()
    }

    /// A node appeared in the registry: the module's source ends the wait.
    func nodeAppeared(named name: String) {
        guard isAwaitingSource, name == sourceName else { return }
        sourceAppeared()
    }

    private func sourceAppeared() {
        guard isAwaitingSource else { return }
        isAwaitingSource = false
        sourceWaitEnds = nil
        sourceReady?()
    }

    /// The echo-cancelled source the voice capture records while the module is loaded.
    var sourceName: String { "\(nodePrefix).echo-cancel.source" }

    /// Whether the module is loaded and alive.
    var isLoaded: Bool { handle.map { CPipeWireShim_moduleIsAlive($0) } ?? false }

    /// The module's arguments (SPA JSON): stereo WebRTC cancellation at 48 kHz (stereo as the engine's
    /// capture, so a talker alone keeps its level: a mono canceller cost 3 dB in the upmix) in 20 ms
    /// blocks (a quantum of 960 frames while it runs: the canceller's 10 ms blocks, twice, so every
    /// cycle hands it whole blocks), the reference taken from the default sink's monitor, WebRTC's
    /// noise suppression off (measured once with it on, it took out less of the echo; the
    /// SharedSessionPipeWire overview has the figures) and its gain control off.
    var arguments: String {
        var text = """
            { node.latency = "960/48000" audio.rate = 48000 audio.channels = 2 audio.position = [ FL FR ]
              monitor.mode = true library.name = "aec/libspa-aec-webrtc"
              aec.args = { webrtc.noise_suppression = false webrtc.gain_control = false }
              capture.props = { node.name = "\(nodePrefix).echo-cancel.capture" node.passive = true }
              sink.props = { node.name = "\(nodePrefix).echo-cancel.reference" }
              source.props = { node.name = "\(sourceName)" priority.session = \(NodeFactory.neverDefaultPriority)
                node.description = "\(String(applicationName.map { $0 == "\"" ? "'" : $0 })) voice (echo-cancelled)" }
            """
        if let remoteName { text += " remote.name = \"\(remoteName)\"" }
        return text + " }"
    }

    /// Loads the module unless it is loaded. Throws `engineUnavailable` with PipeWire's reason if it
    /// cannot be loaded (the module or the WebRTC plugin missing: Debian's libpipewire-0.3-modules and
    /// libspa-0.2-modules).
    func load() throws(SessionError) {
        retryAt = nil
        if isLoaded { return }
        unload()
        let data = Unmanaged.passUnretained(self).toOpaque()
        guard
            let loaded = CPipeWireShim_moduleLoad(
                context, Self.moduleName, arguments,
                { data in
                    guard let data else { return }
                    Unmanaged<EchoCanceller>.fromOpaque(data).takeUnretainedValue().wentAway()
                }, data)
        else {
            let result = -errno
            throw .pipeWire(
                .engineUnavailable,
                "cannot load \(Self.moduleName) for the voice's echo cancellation (install Debian's "
                    + "libpipewire-0.3-modules and libspa-0.2-modules, which has the WebRTC canceller)",
                result: result)
        }
        handle = loaded
        logger.info("echo cancellation on: the voice records \(sourceName)")
    }

    /// Unloads the module (its nodes go with it) and cancels a pending retry. The module is destroyed on
    /// the context's data thread (`CPipeWireShim_moduleUnload`): destroyed here, on the loop thread, it
    /// NULLed its capture stream while that stream's process callback still ran, which then queued its
    /// buffer on the NULL stream (issue 23).
    func unload() {
        retryAt = nil
        isAwaitingSource = false
        sourceWaitEnds = nil
        guard let handle else { return }
        CPipeWireShim_moduleUnload(handle)
        self.handle = nil
    }

    /// Unloads the module for good (the engine is going away).
    func shutdown() {
        unload()
        deadlinesChanged = nil
    }

    /// The module destroyed itself (its connection broke, or a stream of it was disconnected).
    private func wentAway() {
        logger.warning("\(Self.moduleName) went away; loading it again in \(Self.retryDelay)")
        retryAt = .now + Self.retryDelay
        deadlinesChanged?()
    }
}

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#endif
