import SharedSession

// What units and the host hold: session leases, ducks and pauses of the main stream; the host's
// volume and the platform's events.

/// Takes a session lease of `type` (a `sharedsession_lease_type`) for `owner`; writes its handle. Release it with
/// `sharedsession_release`.
@c(sharedsession_acquire)
public func acquire(
    _ session: UInt64, _ type: Int32, _ owner: UnsafePointer<CChar>?, _ lease: UnsafeMutablePointer<UInt64>?
) -> Status {
    call { () throws(CallError) in
        let out = try output(lease, "lease")
        let name = try string(owner, "owner")
        guard let type = LeaseType(rawValue: type) else { throw .invalidArgument("lease type \(type) does not exist") }
        let box = try HandleTable.shared.session(session)
        let held = try SharedSessionC.session { () throws(SessionError) in
            try box.session.acquire(type == .voice ? .voice : .generic, owner: name)
        }
        out.pointee = try file(.lease(held), in: session) { held.release() }
    }
}

/// Ducks the main stream for `owner` to the host's volume × `level` (0 through 1), or by the
/// policy's level when `level` is negative; writes the duck's handle.
@c(sharedsession_duck)
public func duck(
    _ session: UInt64, _ owner: UnsafePointer<CChar>?, _ level: Float, _ duck: UnsafeMutablePointer<UInt64>?
) -> Status {
    call { () throws(CallError) in
        let out = try output(duck, "duck")
        let name = try string(owner, "owner")
        let box = try HandleTable.shared.session(session)
        let held = try SharedSessionC.session { () throws(SessionError) in
            level < 0 ? box.session.duck(owner: name) : try box.session.duck(owner: name, level: level)
        }
        out.pointee = try file(.duck(held), in: session) { held.release() }
    }
}

/// Pauses the main stream for `owner` instead of ducking it; writes the pause's handle.
@c(sharedsession_pause_main)
public func pauseMain(_ session: UInt64, _ owner: UnsafePointer<CChar>?, _ pause: UnsafeMutablePointer<UInt64>?)
    -> Status
{
    call { () throws(CallError) in
        let out = try output(pause, "pause")
        let name = try string(owner, "owner")
        let held = try HandleTable.shared.session(session).session.pauseMain(owner: name)
        out.pointee = try file(.duck(held), in: session) { held.release() }
    }
}

/// Sets the host's volume for the main stream (0 through 1); ducks multiply it, never replace it.
@c(sharedsession_set_main_volume)
public func setMainVolume(_ session: UInt64, _ volume: Float) -> Status {
    call { () throws(CallError) in
        let box = try HandleTable.shared.session(session)
        try SharedSessionC.session { () throws(SessionError) in try box.session.setMainVolume(volume) }
    }
}

/// Passes one of the platform's events (a `sharedsession_platform_event`) on.
@c(sharedsession_handle_event)
public func handleEvent(_ session: UInt64, _ event: Int32) -> Status {
    call { () throws(CallError) in
        guard let event = PlatformEvent(rawValue: event) else {
            throw .invalidArgument("event \(event) does not exist")
        }
        let box = try HandleTable.shared.session(session)
        let system: SystemEvent =
            switch event {
            case .interruptionBegan: .interruptionBegan
            case .interruptionEndedResume: .interruptionEnded(shouldResume: true)
            case .interruptionEnded: .interruptionEnded(shouldResume: false)
            case .didEnterBackground: .didEnterBackground
            case .willEnterForeground: .willEnterForeground
            case .otherAudioStarted: .otherAudioStarted
            case .otherAudioStopped: .otherAudioStopped
            }
        box.session.handle(system)
    }
}

/// Passes a route change on: `reason` as the platform names it ("newDeviceAvailable",
/// "oldDeviceUnavailable", ...), the outputs before and after (either may be NULL).
@c(sharedsession_route_changed)
public func routeChanged(
    _ session: UInt64, _ reason: UnsafePointer<CChar>?, _ previous: UnsafePointer<CChar>?,
    _ current: UnsafePointer<CChar>?
) -> Status {
    call { () throws(CallError) in
        let why = try string(reason, "reason")
        let before = try previous.map { (pointer) throws(CallError) in try string(pointer, "previous_output") }
        let after = try current.map { (pointer) throws(CallError) in try string(pointer, "current_output") }
        let box = try HandleTable.shared.session(session)
        box.session.handle(
            .routeChanged(RouteChange(reason: RouteChangeReason(why), previousOutput: before, currentOutput: after)))
    }
}

/// Files what a call made under a new handle of `session`; if the session closed meanwhile (another
/// thread, or its event callback, released it while the call ran), undoes it (`undo`) and reports
/// `sessionClosed`: the call reached the session as it closed.
func file(_ object: HandleTable.Object, in session: UInt64, undo: () -> Void) throws(CallError) -> UInt64 {
    do throws(CallError) {
        return try HandleTable.shared.add(object, session: session)
    } catch {
        undo()
        throw CallError(
            status: .sessionClosed,
            message: "session \(session) was released while this call ran (by another thread or its event "
                + "callback): what the call made was undone; start a new session to go on")
    }
}
