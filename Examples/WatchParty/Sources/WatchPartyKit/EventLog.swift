import Foundation
import SharedSession
import Synchronization

/// The session's events as a person reads them, stamped with the scene time, handed to the live
/// view as they happen and kept for the summary.
///
/// It is the session's delegate rather than an `events` subscriber because the delegate is called
/// synchronously, on the thread that made the change: on the offline engine the frame count at that
/// moment is the event's exact place in the rendered audio. An `AsyncStream` consumer would read the
/// clock later. (PipeWire's own events arrive on its event thread; they are stamped when they arrive.)
final class EventLog: SharedSessionDelegate {
    /// One event, worded.
    struct Entry: Sendable {
        /// Seconds of scene time.
        let time: Double
        /// What happened, in a word or two ("duck requested").
        let what: String
        /// The details (ids, gains, owners).
        let detail: String
        /// Who or what caused it.
        let cause: String

        /// The entry as one line of the log.
        var line: String {
            String(format: "%8.3f  ", time) + what.padding(toLength: 19, withPad: " ", startingAt: 0) + " "
                + detail + "   ← " + cause
        }
    }

    private let clock: @Sendable () -> Double
    private let sink: @Sendable (Entry) -> Void
    /// Stream names by id, learnt from `streamOpened`, since later events carry only the id.
    private let streamNames = Mutex<[StreamID: String]>([:])
    private let entries = Mutex<[Entry]>([])

    /// A log whose entries are stamped by `clock` and passed to `sink` as they come.
    init(clock: @escaping @Sendable () -> Double, sink: @escaping @Sendable (Entry) -> Void) {
        self.clock = clock
        self.sink = sink
    }

    /// Every entry so far.
    var all: [Entry] { entries.withLock { $0 } }

    // MARK: SharedSessionDelegate

    func session(_ session: SharedSession, didEmit event: SessionEvent) {
        if case .streamOpened(let info) = event.kind {
            streamNames.withLock { $0[info.id] = info.descriptor.name }
        }
        let (what, detail) = describe(event.kind)
        let entry = Entry(time: clock(), what: what, detail: detail, cause: describe(event.cause))
        entries.withLock { $0.append(entry) }
        sink(entry)
    }

    // MARK: Wording

    private func name(_ stream: StreamID) -> String {
        streamNames.withLock { $0[stream] } ?? "\(stream)"
    }

    private func gain(_ value: Float) -> String { String(format: "%.3f", value) }
    private func milliseconds(_ value: Duration) -> String {
        let (seconds, attoseconds) = value.components
        return String(format: "%.1f", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }

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
        case .outputLatencyChanged(let stream, let from, let to):
            (
                "output latency",
                "\(name(stream)) \(from.map { "\(milliseconds($0)) ms" } ?? "unknown") → \(milliseconds(to)) ms"
            )
        case .outputLatencyRejected(let stream, let reason): ("output latency REFUSED", "\(name(stream)): \(reason)")
        case .streamRenegotiated(let stream, let paused):
            ("renegotiated", "\(name(stream)): paused \(milliseconds(paused)) ms by the server")
        case .loudnessDuckChanged(let stream, let reading?): ("loudness duck", "\(name(stream)): \(reading)")
        case .loudnessDuckChanged(let stream, nil): ("loudness duck", "\(name(stream)): none")
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
        case .system(let event): "system: " + describe(event)
        case .engine(let event): "engine: \(event)"
        }
    }

    private func describe(_ event: SystemEvent) -> String {
        switch event {
        case .interruptionBegan: "interruption began"
        case .interruptionEnded(let resume): "interruption ended" + (resume ? " (shouldResume)" : "")
        case .routeChanged(let change): "route changed (\(change.reason))"
        case .didEnterBackground: "did enter background"
        case .willEnterForeground: "will enter foreground"
        case .otherAudioStarted: "other audio started"
        case .otherAudioStopped: "other audio stopped"
        }
    }
}
