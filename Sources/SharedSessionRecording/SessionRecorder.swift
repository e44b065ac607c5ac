import Dispatch
public import Foundation
public import SharedSession

/// Writes everything that reaches a session, and every event it emits, to a JSON Lines file that
/// ``SessionReplayer`` can replay: what a host attaches to a bug report ("volume stays low after the
/// call").
///
/// ```swift
/// let recorder = try SessionRecorder(session: session, to: logsDirectory.appending(path: "session.jsonl"))
/// // ... the app runs ...
/// try recorder.stop()
/// ```
///
/// The recorder receives each input and event as a `SessionInputObserver` (under the session's
/// lane lock, so it only appends them to a buffer) and writes them from a queue of its own, so the
/// file is at most a moment behind the session. The format is described in ``SessionRecording``.
///
/// Give `framePosition` when the session runs on an `OfflineEngine` driven by hand (a test, a
/// render job): `{ engine.framesRendered }`. Each input then carries the frame it arrived at and the
/// replay renders the same audio between inputs; without it the replay converts times to frames.
///
/// Until ``stop()`` the session holds the recorder (as an input observer) and the recorder the
/// session: stop it when the recording is done.
public final class SessionRecorder: SessionInputObserver {
    /// The file being written.
    public let url: URL
    /// The session recorded.
    public let session: SharedSession

    private let start: ContinuousClock.Instant
    private let framePosition: (@Sendable () -> Int)?
    private let queue = DispatchQueue(label: "SharedSession.SessionRecorder")

    private struct Pending {
        var lines: [Line] = []
        var flushScheduled = false
        var stopped = false
    }

    private struct Output {
        var handle: FileHandle?
        var failure: SessionError?
    }

    /// A line to write: what, when, and at which frame if known.
    private typealias Line = (content: RecordingFormat.Line.Content, time: ContinuousClock.Instant, frame: Int?)

    private let pending = Locked(Pending())
    private let output: Locked<Output>

    /// Starts recording `session` into a new file at `url` (replacing one that is there): writes the
    /// header with the session's policy and its engine's format, then every input and event from now on.
    ///
    /// - Throws: `SessionError` with code `fileError` if the file cannot be created; nothing is
    ///   recorded then.
    public init(session: SharedSession, to url: URL, framePosition: (@Sendable () -> Int)? = nil)
        throws(SessionError)
    {
        self.url = url
        self.session = session
        self.framePosition = framePosition
        let start = session.clock.now()
        self.start = start
        let format = session.engine.format
        let handle: FileHandle
        do {
            let header = RecordingFormat.Header(
                format: SessionRecording.format, version: SessionRecording.version, sampleRate: format.sampleRate,
                channels: format.channels, recordedAt: ISO8601DateFormatter().string(from: Date()),
                policy: session.policy)
            let data = Data((try header.text(RecordingFormat.encoder(origin: start)) + "\n").utf8)
            guard FileManager.default.createFile(atPath: url.path, contents: data) else {
                throw CocoaError(.fileWriteUnknown)
            }
            handle = try FileHandle(forWritingTo: url)
            try handle.seekToEnd()
        } catch {
            throw SessionError(
                code: .fileError,
                message: "cannot write the session recording \(url.path): \(error.localizedDescription); "
                    + "choose a writable path")
        }
        output = Locked(Output(handle: handle))
        session.addInputObserver(self)
    }

    /// Receives an input: kept for the writing queue.
    public func session(_ session: SharedSession, received input: SessionInput, at time: ContinuousClock.Instant) {
        append((.input(input), time, framePosition?()))
    }

    /// Receives an event: kept for the writing queue.
    public func session(_ session: SharedSession, emitted event: SessionEvent, at time: ContinuousClock.Instant) {
        append((.event(event), time, nil))
    }

    /// Writes the gain each stream's render side has reached now (for an `OfflineEngine`,
    /// `OfflineEngine.currentGain(of:)`), under `label`: a point where ``SessionReplayer`` checks that
    /// its own render side reached the same gains, within 0.1 dB. Call it between render calls, from
    /// the thread that renders.
    public func recordLevels(_ gains: [StreamID: Float], label: String) {
        let levels = RecordingFormat.Levels(
            label: label,
            gains: gains.sorted { $0.key < $1.key }.map { RecordingFormat.Levels.Gain(stream: $0.key, gain: $0.value) }
        )
        append((.levels(levels), session.clock.now(), framePosition?()))
    }

    private func append(_ line: Line) {
        let schedule = pending.withLock { pending -> Bool in
            guard !pending.stopped else { return false }
            pending.lines.append(line)
            defer { pending.flushScheduled = true }
            return !pending.flushScheduled
        }
        if schedule { queue.async { self.write() } }
    }

    /// Writes what is buffered. Runs on `queue` only, so lines reach the file in order.
    private func write() {
        let lines = pending.withLock { pending in
            defer {
                pending.lines.removeAll(keepingCapacity: true)
                pending.flushScheduled = false
            }
            return pending.lines
        }
        guard !lines.isEmpty else { return }
        output.withLock { output in
            guard let handle = output.handle, output.failure == nil else { return }
            do {
                let encoder = RecordingFormat.encoder(origin: start)
                var text = ""
                for line in lines {
                    text += try RecordingFormat.Line.text(
                        time: line.time - start, frame: line.frame, line.content, encoder)
                    text += "\n"
                }
                let data = Data(text.utf8)
                try handle.write(contentsOf: data)
            } catch {
                output.failure = SessionError(
                    code: .fileError,
                    message: "cannot write the session recording \(url.path): \(error.localizedDescription); "
                        + "the lines from here on are lost")
            }
        }
    }

    /// Writes everything received so far to the file before returning.
    ///
    /// - Throws: `SessionError` with code `fileError` if writing failed (then or earlier).
    public func flush() throws(SessionError) {
        queue.sync { write() }
        if let failure = output.withLock({ $0.failure }) { throw failure }
    }

    /// Stops recording: detaches from the session, writes what is left and closes the file. Stopping
    /// twice does nothing more.
    ///
    /// - Throws: `SessionError` with code `fileError` if writing failed (then or earlier).
    public func stop() throws(SessionError) {
        session.removeInputObserver(self)
        pending.withLock { $0.stopped = true }
        queue.sync { write() }
        let failure = output.withLock { output -> SessionError? in
            try? output.handle?.close()
            output.handle = nil
            return output.failure
        }
        if let failure { throw failure }
    }
}
