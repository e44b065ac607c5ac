import Foundation
import SharedSession
import SharedSessionCoding
import SharedSessionPipeWire

// The session's life, its events and its state: the calls a host makes first and last.

private let versionString: StaticString = "0.2.0"

/// The library's version, "major.minor.patch"; a static string, never freed.
@c(sharedsession_version)
public func version() -> UnsafePointer<CChar> {
    UnsafeRawPointer(versionString.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// The message of this thread's last call: why it failed, or "" if it succeeded. Owned by the
/// library; valid until this thread's next call.
@c(sharedsession_last_error_message)
public func lastErrorMessage() -> UnsafePointer<CChar> {
    LastError.current
}

/// Starts a session on `engine` (a `sharedsession_engine`), named `applicationName` in the sound server; writes its
/// handle. On PipeWire with no daemon reachable it returns `engineUnavailable` with the daemon's error as the message
/// (where it looked, how to start one): start on the offline engine then.
@c(sharedsession_start)
public func start(
    _ engine: Int32, _ applicationName: UnsafePointer<CChar>?, _ session: UnsafeMutablePointer<UInt64>?
) -> Status {
    call { () throws(CallError) in
        let out = try output(session, "session")
        let name = try string(applicationName, "application_name")
        guard let engine = EngineKind(rawValue: engine) else {
            throw .invalidArgument("engine \(engine) does not exist")
        }
        let audio: any AudioEngine
        switch engine {
        case .offline: audio = OfflineEngine()
        case .pipewire:
            audio = try SharedSessionC.session { () throws(SessionError) in try PipeWireEngine(applicationName: name) }
        }
        let pump = try EventPump()
        let box = SessionBox(session: SharedSession(engine: audio, policy: .default), engine: audio, pump: pump)
        let handle: UInt64
        do throws(CallError) {
            handle = try HandleTable.shared.add(.session(box), session: nil)
        } catch {
            box.close(releasing: [])
            throw error
        }
        pump.handle.store(handle, ordering: .relaxed)
        out.pointee = handle
    }
}

/// Releases any handle: a lease or a duck is given back, a stream closed, a server stopped; a
/// session is closed with everything it handed out (those handles go stale). A handle released
/// twice, 0 or stale returns `invalidHandle`.
@c(sharedsession_release)
public func release(_ handle: UInt64) -> Status {
    call { () throws(CallError) in
        switch try HandleTable.shared.remove(handle) {
        case .session(let box): box.close(releasing: HandleTable.shared.removeAll(ofSession: handle))
        case .lease(let lease): lease.release()
        case .duck(let duck): duck.release()
        case .stream(let stream): stream.close()
        case .server(let server): server.close()
        }
    }
}

/// The engine the session plays on (a `sharedsession_engine`).
@c(sharedsession_engine_of)
public func engineOf(_ session: UInt64, _ engine: UnsafeMutablePointer<Int32>?) -> Status {
    call { () throws(CallError) in
        let out = try output(engine, "engine")
        let kind: EngineKind = try HandleTable.shared.session(session).engine is OfflineEngine ? .offline : .pipewire
        out.pointee = kind.rawValue
    }
}

/// The callback that receives every event of `session` as one line of JSON (the recordings' form):
/// on one thread of the library's own, in order, one at a time, with no lock held, so it may call
/// the library (even release the session). The string is valid during the call. NULL stops it.
@c(sharedsession_set_event_callback)
public func setEventCallback(
    _ session: UInt64,
    _ callback: (@convention(c) (UInt64, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void)?,
    _ context: UnsafeMutableRawPointer?
) -> Status {
    call { () throws(CallError) in
        try HandleTable.shared.session(session).pump.setCallback(
            callback.map { EventCallback(function: $0, context: context) })
    }
}

/// The snapshot as text, for people (what is held, ducked and playing); free it with
/// `sharedsession_free`.
@c(sharedsession_snapshot_text)
public func snapshotText(_ session: UInt64, _ text: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Status {
    call { () throws(CallError) in
        let out = try output(text, "text")
        out.pointee = duplicate("\(try HandleTable.shared.session(session).session.snapshot)")
    }
}

/// The snapshot as JSON, in the recordings' form; free it with `sharedsession_free`.
@c(sharedsession_snapshot_json)
public func snapshotJSON(_ session: UInt64, _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Status {
    call { () throws(CallError) in
        let out = try output(json, "json")
        let snapshot = try HandleTable.shared.session(session).session.snapshot
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(snapshot) else {
            throw CallError(status: .sessionError, message: "the snapshot could not be encoded")
        }
        out.pointee = duplicate(String(decoding: data, as: UTF8.self))
    }
}

/// The main stream's gains now: the host's volume, the duck factor, their product, and the number
/// of live ducks. Any pointer may be NULL.
@c(sharedsession_gains)
public func gains(
    _ session: UInt64, _ volume: UnsafeMutablePointer<Float>?, _ duckFactor: UnsafeMutablePointer<Float>?,
    _ mainGain: UnsafeMutablePointer<Float>?, _ ducks: UnsafeMutablePointer<Int32>?
) -> Status {
    call { () throws(CallError) in
        let snapshot = try HandleTable.shared.session(session).session.snapshot
        volume?.pointee = snapshot.mainVolume
        duckFactor?.pointee = snapshot.duckFactor
        mainGain?.pointee = snapshot.mainGain
        ducks?.pointee = Int32(snapshot.ducks.count)
    }
}

/// Frees a string the library handed out (a snapshot). A pointer it did not hand out, or freed
/// already, returns `invalidArgument` and is left alone; NULL does nothing.
@c(sharedsession_free)
@discardableResult
public func freeString(_ string: UnsafeMutablePointer<CChar>?) -> Status {
    call { () throws(CallError) in
        guard let string else { return }
        guard handedOut.withLock({ $0.remove(UInt(bitPattern: string)) }) != nil else {
            throw .invalidArgument("the pointer was not handed out by the library, or was freed already")
        }
        Foundation.free(string)
    }
}
