internal import CPipeWireShim
import SharedSession

extension SessionError {
    /// An error over a PipeWire result (a negative errno), with the server's wording of it, as
    /// swift-system's `Errno` names the C function that failed.
    static func pipeWire(
        _ code: Code, _ what: String, result: Int32, fix: String? = nil, file: String = #fileID, line: Int = #line
    ) -> SessionError {
        let reason = String(cString: CPipeWireShim_strerror(result))
        var message = "\(what): \(reason) (\(result))"
        if let fix { message += "; \(fix)" }
        return SessionError(code: code, message: message, file: file, line: line)
    }

    /// No daemon answered at `socket`: says where the engine looked and what the user can do on their
    /// own machine, since the user of the library has none of this repository's scripts.
    static func noDaemon(at socket: DaemonSocket, result: Int32, file: String = #fileID, line: Int = #line)
        -> SessionError
    {
        .pipeWire(
            .engineUnavailable, "no PipeWire daemon could be reached", result: result,
            fix: "\(socket.searched). \(noDaemonAdvice)", file: file, line: line)
    }

    /// What a host can do without a daemon: the sentence ends every ``noDaemon(at:result:file:line:)``.
    static let noDaemonAdvice =
        "To start one: run the app in a desktop session, whose PipeWire sets XDG_RUNTIME_DIR "
        + "(usually /run/user/<uid>); or start the user's daemons with "
        + "`systemctl --user start pipewire wireplumber`; or, when working in the SharedSession repository, "
        + "run `Scripts/pipewire-headless start` and export the XDG_RUNTIME_DIR it prints. "
        + "Without a daemon, use the offline engine"
}
