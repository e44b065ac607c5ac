import SharedSession

/// Echo cancellation of the voice input (``EchoCanceller``): wanted while the active configuration's
/// mode asks for voice processing, in place while the voice capture is on, loaded again after the
/// daemon restarts or the module went away.
extension EngineCore {
    /// The configuration's mode asks for voice processing (or no longer does). A voice capture already
    /// on is made again through the canceller (or straight from the default source).
    func setVoiceProcessing(_ wanted: Bool) {
        guard wanted != wantsEchoCancellation else { return }
        wantsEchoCancellation = wanted
        guard let ring = voice.ring else { return }
        restartVoice(into: ring)
    }

    /// Whether the voice capture records through the echo canceller now.
    var isEchoCancelling: Bool { voice.ring != nil && wantsEchoCancellation && echo.isLoaded }

    /// The source the voice capture records: the canceller's while it is wanted and loads (loaded now
    /// if connected), else nil, the default source. A canceller that cannot be loaded leaves the voice
    /// uncancelled rather than refusing it, and says so in the log.
    func voiceTarget() -> String? {
        guard wantsEchoCancellation else {
            echo.unload()
            return nil
        }
        guard core != nil else { return echo.sourceName }  // loaded on connection
        do {
            try echo.load()
            return echo.sourceName
        } catch {
            logger.error("the voice is captured without echo cancellation: \(error.message)")
            return nil
        }
    }

    /// Makes the voice capture again, through the canceller if it is wanted.
    func restartVoice(into ring: AudioRingBuffer) {
        defer { reschedule() }
        do {
            try startVoice(into: ring)
        } catch {
            logger.error("the voice capture could not be made again: \(error.message)")
        }
    }

    /// Starts the voice capture into `ring`: at once from the default source, or through the canceller,
    /// whose node is made once the canceller's source is in the registry (``EchoCanceller/awaitSource()``).
    func startVoice(into ring: AudioRingBuffer) throws(SessionError) {
        let target = voiceTarget()
        guard target != nil, echo.isLoaded else {
            return try voice.start(into: ring, target: target, core: core, observer: self)
        }
        try voice.start(into: ring, target: target, core: nil, observer: self)
        echo.awaitSource()
    }

    /// The canceller's source appeared (or the wait for it is over): the voice capture's node is made.
    func echoSourceReady() {
        guard let core else { return }
        voice.reopen(core: core, observer: self)
        reschedule()
    }

    /// On a new connection, before the voice capture's node is made again: the canceller is loaded
    /// again (the old one went with the old connection). Returns true when the voice capture's node
    /// waits for the canceller's source, false when it can be made now.
    func reconnectEchoCanceller() -> Bool {
        guard voice.ring != nil, wantsEchoCancellation else { return false }
        do {
            try echo.load()
            echo.awaitSource()
            return true
        } catch {
            logger.error("echo cancellation not restored after reconnecting: \(error.message)")
            return false
        }
    }

    /// The module went away on its own while the connection stayed: load it and make the voice node again.
    func echoCancellerWentAway() {
        guard core != nil, let ring = voice.ring, wantsEchoCancellation else { return }
        restartVoice(into: ring)
    }
}
