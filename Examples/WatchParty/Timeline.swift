import Foundation
import SharedSession
import Synchronization

/// Prints the scene as a person follows it: a header per step, one line per session event stamped
/// with the scene time, and the measured levels after each stretch of rendering.
///
/// It is the session's delegate rather than an `events` subscriber because the delegate is called
/// synchronously, on the thread that made the change: on the offline engine the frame count at that
/// moment is the event's exact place in the rendered audio. An `AsyncStream` consumer would read the
/// clock later. (PipeWire's own events arrive on its event thread; they are stamped when they arrive.)
final class Timeline: SharedSessionDelegate {
    private let playback: any ScenePlayback
    private let isQuiet: Bool
    /// Stream names by id, learnt from `streamOpened`, since later events carry only the id.
    private let streamNames = Mutex<[StreamID: String]>([:])
    private let eventCount = Atomic<Int>(0)

    init(playback: any ScenePlayback, quiet: Bool) {
        self.playback = playback
        self.isQuiet = quiet
    }

    /// Seconds of the scene played so far: the scene's clock.
    var now: Double { playback.now }

    /// Events seen so far.
    var eventsSeen: Int { eventCount.load(ordering: .relaxed) }

    func say(_ line: String = "") {
        if !isQuiet { print(line) }
    }

    func step(_ title: String) {
        say()
        say(String(format: "[%6.3f s] ", now) + title)
    }

    func note(_ text: String) {
        say("           · " + text)
    }

    func level(main: Double?, mix: Double?, snapshot: SessionSnapshot) {
        say(
            String(format: "%9.3f  ", now) + "LEVEL main " + LevelMeter.format(main) + " (\(mainGain(snapshot)))"
                + "  mix " + LevelMeter.format(mix) + "  | " + describe(snapshot))
    }

    /// The end of a step whose levels are measured from a recording after the scene.
    func state(snapshot: SessionSnapshot) {
        say(String(format: "%9.3f  ", now) + "STATE main (\(mainGain(snapshot)))  | " + describe(snapshot))
    }

    private func mainGain(_ snapshot: SessionSnapshot) -> String {
        snapshot.streams.first(where: \.isMain).map {
            String(format: "gain %.3f", $0.gain) + ($0.isPaused ? ", paused" : "")
        }
            ?? "closed"
    }

    private func describe(_ snapshot: SessionSnapshot) -> String {
        let session: String
        if let active = snapshot.activeConfiguration {
            session = "\(active.category) (" + snapshot.owners.joined(separator: ", ") + ")"
        } else {
            session = "inactive"
        }
        let ducks =
            snapshot.ducks.isEmpty ? "no ducks" : "ducked by " + snapshot.ducks.map(\.owner).joined(separator: ", ")
        return "\(session), \(ducks)"
    }

    // MARK: SharedSessionDelegate

    func session(_ session: SharedSession, didEmit event: SessionEvent) {
        eventCount.add(1, ordering: .relaxed)
        if case .streamOpened(let info) = event.kind {
            streamNames.withLock { $0[info.id] = info.descriptor.name }
        }
        let (what, detail) = describe(event.kind)
        let padded = what.padding(toLength: 20, withPad: " ", startingAt: 0)
        say(String(format: "%9.3f  ", now) + padded + detail + "   ← " + describe(event.cause))
    }

    // MARK: Wording

    private func name(_ stream: StreamID) -> String {
        streamNames.withLock { $0[stream] } ?? "\(stream)"
    }

    private func gain(_ value: Float) -> String { String(format: "%.3f", value) }

    private func describe(_ kind: SessionEvent.Kind) -> (String, String) {
        switch kind {
        case .leaseAcquired(let lease): ("session acquired", "\(lease.type) \(lease.id) for \(lease.owner)")
        case .leaseReleased(let lease): ("session released", "\(lease.type) \(lease.id) of \(lease.owner)")
        case .leaseDropped(let lease):
            ("session DROPPED", "\(lease.type) \(lease.id) of \(lease.owner), never released")
        case .duckAcquired(let duck): ("duck requested", "\(duck.style) \(duck.id) by \(duck.owner)")
        case .duckReleased(let duck): ("duck released", "\(duck.id) of \(duck.owner)")
        case .duckDropped(let duck): ("duck DROPPED", "\(duck.id) of \(duck.owner), never released")
        case .releaseIgnored(let owner, let what): ("release ignored", "\(owner): \(what)")
        case .activated(let configuration): ("activated", "\(configuration)")
        case .configurationChanged(let from, let to): ("configuration", "\(from.category) → \(to)")
        case .deactivated(let notified): ("deactivated", notified ? "other apps told they may resume" : "")
        case .activationFailed(let configuration, let message): ("activation FAILED", "\(configuration): \(message)")
        case .mainVolumeChanged(let from, let to): ("host volume", "\(gain(from)) → \(gain(to))")
        case .mainGainChanged(let from, let to): ("main gain", "\(gain(from)) → \(gain(to))")
        case .mainPlaybackChanged(let paused): ("main playback", paused ? "paused" : "playing")
        case .interruptionBegan: ("interruption", "began")
        case .interruptionEnded(let shouldResume):
            ("interruption", "ended" + (shouldResume ? ", resume" : ", wait for host"))
        case .routeChanged(let change): ("route", "\(change.reason) → \(change.currentOutput ?? "?")")
        case .renderingSuspended(let suspended): ("rendering", suspended ? "suspended" : "running")
        case .backgroundChanged(let background): ("app", background ? "in background" : "in foreground")
        case .otherAudioChanged(let playing): ("other app's audio", playing ? "playing" : "stopped")
        case .backgroundMusicMuted(let muted): ("background music", muted ? "muted" : "unmuted")
        case .streamOpened(let info):
            ("stream opened", "\(info.descriptor.name) (\(info.descriptor.role)) \(info.id) at gain \(gain(info.gain))")
        case .streamClosed(let info): ("stream closed", "\(info.descriptor.name) \(info.id)")
        case .streamVolumeChanged(let stream, let from, let to):
            ("stream volume", "\(name(stream)) \(gain(from)) → \(gain(to))")
        case .streamFault(let stream, let reason): ("stream FAULT", "\(name(stream)): \(reason)")
        case .connectionLost(let reason): ("connection lost", reason)
        case .reconnected(let attempts, let downtime): ("reconnected", "after \(attempts) attempts, \(downtime)")
        case .quantumChanged(let frames): ("render quantum", "\(frames) frames")
        case .requestRejected(let error): ("request REJECTED", "\(error)")
        case .limitApplied(let owner, let limit): ("limit applied", "\(owner): \(limit)")
        case .duckExpired(let duck): ("duck EXPIRED", "\(duck.id) of \(duck.owner) at its deadline")
        case .unitReleased(let owner, let reason): ("unit released", "\(owner): \(reason)")
        case .closed: ("session closed", "")
        }
    }

    private func describe(_ cause: EventCause) -> String {
        switch cause {
        case .sessionLease(let id, let owner): "\(owner) session \(id)"
        case .duckLease(let id, let owner): "\(owner) duck \(id)"
        case .host: "host"
        case .unit(let owner): owner
        case .system(let event): "system: \(event)"
        case .engine(let event): "engine: \(event)"
        }
    }
}
