import SharedSession
import SharedSessionPipeWire
import Synchronization

/// A session the C API handed out: the session, its engine, and the pump of its events.
final class SessionBox: Sendable {
    let session: SharedSession
    let engine: any AudioEngine
    let pump: EventPump
    /// The main stream's id, for the level `sharedsession_render` reports.
    let main = Locked<StreamID?>(nil)
    /// Adopts other clients' nodes, made at the first `sharedsession_adopt_main`.
    let adoption = Locked<NodeAdoption?>(nil)

    init(session: SharedSession, engine: any AudioEngine, pump: EventPump) {
        self.session = session
        self.engine = engine
        self.pump = pump
        session.delegate = pump
    }

    /// Closes what the session's handles held (servers first, so no unit calls in meanwhile), the
    /// session and the engine, then delivers the last events and stops the pump.
    func close(releasing objects: [HandleTable.Object]) {
        for object in objects {
            if case .server(let server) = object { server.close() }
        }
        for object in objects {
            switch object {
            case .lease(let lease): lease.release()
            case .duck(let duck): duck.release()
            case .stream(let stream): stream.close()
            case .session, .server: break
            }
        }
        session.close()
        adoption.withLock { $0 = nil }
        (engine as? PipeWireEngine)?.shutdown()
        pump.stop()
    }
}
