import SharedSession
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Why a call did nothing: the status it returns and the message its thread can read.
struct CallError: Error {
    let status: Status
    let message: String

    static func invalidHandle(_ handle: UInt64) -> CallError {
        CallError(
            status: .invalidHandle,
            message: handle == 0
                ? "handle 0 (NULL): pass a handle a call handed out"
                : "handle \(handle) is not live: it was released, its session was closed, or it was never handed out")
    }

    static func invalidArgument(_ message: String) -> CallError {
        CallError(status: .invalidArgument, message: message)
    }

    /// The session's error with the status that names its code.
    init(_ error: SessionError) {
        let statuses: [SessionError.Code: Status] = [
            .engineUnavailable: .engineUnavailable, .activationRefused: .activationRefused,
            .streamRefused: .streamRefused, .mainStreamAlreadyOpen: .mainStreamAlreadyOpen, .fileError: .fileError,
            .mediaUnreadable: .mediaUnreadable, .noAudioTrack: .noAudioTrack, .limitExceeded: .limitExceeded,
            .sessionClosed: .sessionClosed, .invalidValue: .invalidValue,
            .invalidConfiguration: .invalidConfiguration,
        ]
        self.init(status: statuses[error.code] ?? .sessionError, message: error.message)
    }

    init(status: Status, message: String) {
        self.status = status
        self.message = message
    }
}

/// Runs one C call: its status, with this thread's message set to the error's (or cleared).
func call(_ body: () throws(CallError) -> Void) -> Status {
    do {
        try body()
        LastError.set("")
        return .ok
    } catch {
        LastError.set(error.message)
        return error.status
    }
}

/// Maps the session's typed error to the call's.
func session<T>(_ body: () throws(SessionError) -> T) throws(CallError) -> T {
    do { return try body() } catch { throw CallError(error) }
}

/// A C string argument as a Swift string: NULL and invalid UTF-8 are the caller's error.
func string(_ pointer: UnsafePointer<CChar>?, _ name: String) throws(CallError) -> String {
    guard let pointer else { throw .invalidArgument("\(name) is NULL") }
    guard let value = String(validatingCString: pointer) else { throw .invalidArgument("\(name) is not UTF-8") }
    return value
}

/// The out pointer a call writes to: NULL is the caller's error, before anything is done.
func output<T>(_ pointer: UnsafeMutablePointer<T>?, _ name: String) throws(CallError) -> UnsafeMutablePointer<T> {
    guard let pointer else { throw .invalidArgument("\(name) is NULL: pass where to write the result") }
    return pointer
}

/// The strings handed out and not yet freed: `sharedsession_free` frees only these, so a string
/// freed twice or a pointer the library never gave is an error, not a heap corruption.
let handedOut = Locked(Set<UInt>())

/// A copy of `text` the caller frees with `sharedsession_free`.
func duplicate(_ text: String) -> UnsafeMutablePointer<CChar> {
    guard let copy = strdup(text) else { fatalError("out of memory copying \(text.utf8.count) bytes") }
    _ = handedOut.withLock { $0.insert(UInt(bitPattern: copy)) }
    return copy
}
