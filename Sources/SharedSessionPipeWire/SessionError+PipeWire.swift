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

    /// The sentence that tells a host how to get a daemon, or to fall back to the offline engine.
    static let startDaemonAdvice =
        "start one with `Scripts/pipewire-headless start` and export the XDG_RUNTIME_DIR it prints "
        + "(or use the offline engine)"
}
