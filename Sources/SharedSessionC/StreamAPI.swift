import Foundation
import SharedSession
import SharedSessionMedia
import SharedSessionPipeWire
import SharedSessionRemote

// The main stream from a media file, rendering on the offline engine, and serving units.

/// Opens the media file at `path` (decoded by FFmpeg) as the main stream, playing; writes the
/// stream's handle. Releasing it closes the stream and the file.
@c(sharedsession_open_main_media)
public func openMainMedia(_ session: UInt64, _ path: UnsafePointer<CChar>?, _ stream: UnsafeMutablePointer<UInt64>?)
    -> Status
{
    call { () throws(CallError) in
        let out = try output(stream, "stream")
        let file = try string(path, "path")
        let box = try HandleTable.shared.session(session)
        let handle = try SharedSessionC.session { () throws(SessionError) in
            try box.session.openMainStream(source: try MediaFileSource(path: file, startsPlaying: true))
        }
        box.main.withLock { $0 = handle.id }
        out.pointee = try SharedSessionC.file(.stream(handle), in: session) { handle.close() }
    }
}

/// Makes the nodes of another PipeWire client the main stream (a GStreamer, mpv or VLC player's): those
/// of the process `processID` and its children (0: any process), whose `application.name` is
/// `applicationName` (NULL: any); at least one of the two. Ducks, the host's volume and pauses then act
/// on the player's own nodes; releasing the stream gives them back their volume. Writes the stream's
/// handle; on the offline engine returns `needsPipeWire`.
@c(sharedsession_adopt_main)
public func adoptMain(
    _ session: UInt64, _ processID: Int32, _ applicationName: UnsafePointer<CChar>?,
    _ stream: UnsafeMutablePointer<UInt64>?
) -> Status {
    call { () throws(CallError) in
        let out = try output(stream, "stream")
        let name = try applicationName.map { (pointer) throws(CallError) in try string(pointer, "applicationName") }
        var criteria: [AdoptionRule.Criterion] = []
        if processID != 0 { criteria.append(.processID(processID, includingChildren: true)) }
        if let name { criteria.append(.applicationName(name)) }
        guard !criteria.isEmpty else { throw .invalidArgument("pass a process id, an application name, or both") }
        let box = try HandleTable.shared.session(session)
        guard let engine = box.engine as? PipeWireEngine else {
            throw CallError(status: .needsPipeWire, message: "the session plays offline: adopt nodes on PipeWire")
        }
        let handle = try SharedSessionC.session { () throws(SessionError) in
            let adoption = try box.adoption.withLock { (adoption) throws(SessionError) in
                if let adoption { return adoption }
                let made = try NodeAdoption(session: box.session, engine: engine)
                adoption = made
                return made
            }
            return try adoption.adoptMain(AdoptionRule(criteria: criteria))
        }
        out.pointee = try SharedSessionC.file(.stream(handle), in: session) { handle.close() }
    }
}

/// Renders `milliseconds` of the session on the offline engine, at once; writes the main stream's
/// level over the last 100 ms in dBFS (-200 for silence or no main stream) if `mainLevel` is
/// not NULL. On another engine it returns `notOffline`: that engine plays in real time by itself.
@c(sharedsession_render)
public func render(_ session: UInt64, _ milliseconds: Int32, _ mainLevel: UnsafeMutablePointer<Double>?) -> Status {
    call { () throws(CallError) in
        let box = try HandleTable.shared.session(session)
        guard let offline = box.engine as? OfflineEngine else {
            throw CallError(status: .notOffline, message: "the session plays on PipeWire, in real time: wait instead")
        }
        guard milliseconds > 0, milliseconds <= 600_000 else {
            throw .invalidArgument("milliseconds is \(milliseconds): render 1 through 600000 ms at a time")
        }
        let rendered = try SharedSessionC.session { () throws(SessionError) in
            try offline.render(duration: .milliseconds(Int(milliseconds)))
        }
        let stem = box.main.withLock { $0 }.flatMap { rendered.stems[$0] } ?? []
        let tail = stem.suffix(offline.format.frames(in: .milliseconds(100)) * offline.format.channels)
        let power = tail.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(tail.count, 1))
        mainLevel?.pointee = power > 1e-20 ? 10 * log10(power) : -200
    }
}

/// Serves the session to units in other processes at the Unix socket `path` (mode 0600, the same
/// user only); writes the server's handle. Releasing it disconnects the units, whose leases go.
@c(sharedsession_serve)
public func serve(_ session: UInt64, _ path: UnsafePointer<CChar>?, _ server: UnsafeMutablePointer<UInt64>?)
    -> Status
{
    call { () throws(CallError) in
        let out = try output(server, "server")
        let socket = try string(path, "path")
        let box = try HandleTable.shared.session(session)
        let served = try SharedSessionC.session { () throws(SessionError) in
            try SessionServer(session: box.session, path: socket)
        }
        out.pointee = try file(.server(served), in: session) { served.close() }
    }
}
