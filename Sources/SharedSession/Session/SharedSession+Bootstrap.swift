#if canImport(Runtime)
    import Runtime
#endif

/// The process-wide session, set once at app start as swift-log's `LoggingSystem` is.
extension SharedSession {
    private struct Global {
        var session: SharedSession?
        /// Where the session was set up: the `bootstrap` call, or the first use of ``shared`` before
        /// any bootstrap (which made an offline session).
        var origin: String?
    }

    private static let global = Locked<Global>(Global())

    /// The process-wide session: the one given to ``bootstrap(engine:policy:file:line:)`` at app
    /// start.
    ///
    /// Used before any bootstrap, it is a session on an ``OfflineEngine`` (no sound server) and a
    /// warning is logged; a later bootstrap then stops the process, naming where this first use was
    /// (see ``bootstrap(engine:policy:file:line:)``).
    public static var shared: SharedSession {
        global.withLock { global in
            if let session = global.session { return session }
            let made = SharedSession(engine: OfflineEngine())
            let origin = callerOfShared()
            made.logger.warning(
                """
                SharedSession.shared used before bootstrap(engine:policy:): using an offline engine; \
                a later bootstrap will stop the process
                """,
                metadata: ["first use": "\(origin)"])
            global.session = made
            global.origin = "SharedSession.shared was first used before any bootstrap, at:\n\(origin)"
            return made
        }
    }

    /// Sets the process-wide session's engine and policy, once, at app start, before anything uses
    /// ``shared`` (like swift-log's `LoggingSystem.bootstrap`). Tests never call it: each makes its
    /// own session.
    ///
    /// A second call, or one after ``shared`` was first used (which bound an offline engine: the app
    /// would play nothing), is a programming error and stops the process with a message that says
    /// where the session was set up first, as swift-log's second bootstrap does. Call it first thing
    /// in `main`, before any static initialiser that may touch ``shared``.
    public static func bootstrap(
        engine: some AudioEngine, policy: SessionPolicy, file: String = #fileID, line: Int = #line
    ) {
        let refusal = global.withLock { global -> String? in
            if let origin = global.origin {
                return "SharedSession.bootstrap(engine:policy:) at \(file):\(line) came after the shared session "
                    + "was set up. \(origin)\nBootstrap once, before anything uses SharedSession.shared."
            }
            global.session = SharedSession(engine: engine, policy: policy)
            global.origin = "It was bootstrapped at \(file):\(line)."
            return nil
        }
        if let refusal { preconditionFailure(refusal) }
    }

    /// The frames of the code that read ``shared``: the first frames past the getter, with file and
    /// line where the binary has debug information.
    private static func callerOfShared() -> String {
        #if canImport(Runtime)
            if let frames = try? Backtrace.capture().symbolicated()?.frames.map({ "\($0)" }),
                let getter = frames.firstIndex(where: { $0.contains("SharedSession.shared.getter") })
            {
                return frames.dropFirst(getter + 1).prefix(4).map { "    \($0)" }.joined(separator: "\n")
            }
        #endif
        return "    (no backtrace on this platform: search the app for SharedSession.shared)"
    }
}
