import Foundation
public import Logging
public import SharedSession

/// Runs a ``SessionRecording`` against a fresh session on an `OfflineEngine` and compares what
/// happens with what was recorded: the test an SDK author writes from a bug report's recording.
///
/// ```swift
/// let recording = try SessionRecording(contentsOf: url)
/// let result = try SessionReplayer(recording).run()
/// #expect(result.mismatches.isEmpty)
/// #expect(result.mainLevel(atFrame: 48_000 * 12) == 1)   // the volume came back after the call
/// ```
///
/// The replay session has the recorded policy and format. Every input is applied in order, at the
/// recorded time (the session's clock reads the recorded times, so deadlines fall due as they did)
/// and after rendering up to the recorded frame (or, for inputs recorded without one, the recorded
/// time at the sample rate), so gains and ramps land on the same frames. The engine answers
/// activations, captures and stream opens as the recorded one did, and reports the recorded engine
/// events; calls a unit or the host made through a lease or a stream handle are replayed by id.
///
/// Recordings hold no audio. Each stream plays a stand-in, by default a constant (DC) level of 1 on
/// every channel, so a stem's samples are the gain the session applied (the main stream's
/// ``ReplayResult/mainLevel(atFrame:)``). A voice-activity duck follows the audio of the stream or
/// microphone it listens to; with the stand-ins a followed stream is active for as long as it plays
/// and the microphone is silent. Give ``source`` and ``voiceInput`` to replay with real audio.
public struct SessionReplayer: Sendable {
    /// The recording to replay.
    public let recording: SessionRecording
    /// What each stream plays, by its descriptor: a constant level of 1 unless set.
    public var source: @Sendable (StreamDescriptor) -> any AudioSource
    /// What the voice capture records: silence unless set.
    public var voiceInput: (any AudioSource)?
    /// The frames per render call when the recording names no quantum (a `quantumChanged` engine
    /// event sets it from there on).
    public var quantum: Int = 1024
    /// The replay session's logger: only critical messages by default, since the replay re-enacts
    /// refusals and dropped leases the recorded session already logged.
    public var logger: Logger

    /// Prepares a replay of `recording` with the stand-in sources.
    public init(_ recording: SessionRecording) {
        self.recording = recording
        var logger = Logger(label: "SharedSession.replay")
        logger.logLevel = .critical
        self.logger = logger
        let format = AudioFormat(sampleRate: recording.sampleRate, channels: recording.channels)
        let level = [Float](repeating: 1, count: recording.channels)
        self.source = { _ in
            // One frame of 1 on every channel, looping; the format is valid by construction.
            try! PCMBufferSource(samples: level, loops: true, format: format)
        }
    }

    /// Replays the recording and returns what happened.
    ///
    /// - Throws: `SessionError` with code `quantumOutOfRange` if ``quantum`` is not 1 through 8192.
    ///   A replay that diverges from the recording does not throw: see ``ReplayResult/mismatches``.
    public func run() throws(SessionError) -> ReplayResult {
        guard quantum >= 1, quantum <= AudioFormat.maximumQuantum else {
            throw SessionError(
                code: .quantumOutOfRange,
                message: "replay quantum \(quantum): a quantum must be 1 through \(AudioFormat.maximumQuantum) frames")
        }
        let format = AudioFormat(sampleRate: recording.sampleRate, channels: recording.channels)
        let engine = ReplayEngine(format: format, input: voiceInput, recording: recording)
        let start = ContinuousClock.now
        let time = ManualTime(start)
        let session = SharedSession(engine: engine, policy: recording.policy, logger: logger, clock: .manual(time))
        let collector = ReplayCollector()
        session.addInputObserver(collector)
        var run = ReplayRun(session: session, engine: engine, format: format, quantum: quantum, source: source)
        var levels: [LevelComparison] = []
        for entry in recording.entries {
            let frame = entry.frame ?? format.frames(in: entry.time)
            switch entry.content {
            case .input(let input):
                try run.render(upTo: frame)
                time.set(start + entry.time)
                run.apply(input, line: entry.line)
            case .levels(let label, let gains):
                try run.render(upTo: frame)
                for (stream, gain) in gains.sorted(by: { $0.key < $1.key }) {
                    levels.append(
                        LevelComparison(
                            line: entry.line, label: label, stream: stream, recorded: gain,
                            replayed: engine.offline.currentGain(of: stream)))
                }
            case .event: continue
            }
        }
        session.removeInputObserver(collector)
        let (inputs, events) = collector.taken
        var mismatches = run.mismatches
        let recordedInputs = recording.inputs.compactMap { entry -> (Int, SessionInput)? in
            if case .input(let input) = entry.content { (entry.line, input) } else { nil }
        }
        mismatches += Self.compare(
            recorded: recordedInputs.map { ($0.0, $0.1) }, replayed: inputs, what: "input", describe: { "\($0)" })
        let recordedEvents = recording.entries.compactMap { entry -> (Int, SessionEvent)? in
            if case .event(let event) = entry.content { (entry.line, event) } else { nil }
        }
        mismatches += Self.compare(
            recorded: recordedEvents.map { ($0.0, ReplayResult.normalized($0.1)) },
            replayed: events.map(ReplayResult.normalized), what: "event", describe: { $0 })
        mismatches += levels.filter { !$0.matched }.map {
            ReplayMismatch(
                line: $0.line, recorded: "\($0.stream) at gain \($0.recorded) (\($0.label))",
                replayed: $0.replayed.map { "gain \($0)" } ?? "\($0.stream) not open")
        }
        mismatches += engine.surprises.map { ReplayMismatch(line: nil, recorded: nil, replayed: $0) }
        if engine.unasked > 0 {
            mismatches.append(
                ReplayMismatch(
                    line: nil, recorded: "\(engine.unasked) engine outcomes the replay never asked for", replayed: nil))
        }
        return ReplayResult(
            events: events, recordedEvents: recordedEvents.map(\.1), mismatches: mismatches, levels: levels,
            rendered: run.rendered, mainStreams: run.mainStreams)
    }

    /// Compares two sequences position by position; the extra ones of the longer are mismatches too.
    private static func compare<T: Equatable>(
        recorded: [(Int, T)], replayed: [T], what: String, describe: (T) -> String
    ) -> [ReplayMismatch] {
        var mismatches: [ReplayMismatch] = []
        for index in 0..<max(recorded.count, replayed.count) {
            let expected = index < recorded.count ? recorded[index].1 : nil
            let actual = index < replayed.count ? replayed[index] : nil
            guard expected != actual else { continue }
            mismatches.append(
                ReplayMismatch(
                    line: index < recorded.count ? recorded[index].0 : nil,
                    recorded: expected.map { "\(what) \(describe($0))" },
                    replayed: actual.map { "\(what) \(describe($0))" }))
        }
        return mismatches
    }
}

/// Keeps the replay session's inputs and events, in order.
private final class ReplayCollector: SessionInputObserver {
    private let kept = Locked<([SessionInput], [SessionEvent])>(([], []))

    var taken: ([SessionInput], [SessionEvent]) { kept.withLock { $0 } }

    func session(_ session: SharedSession, received input: SessionInput, at time: ContinuousClock.Instant) {
        kept.withLock { $0.0.append(input) }
    }

    func session(_ session: SharedSession, emitted event: SessionEvent, at time: ContinuousClock.Instant) {
        kept.withLock { $0.1.append(event) }
    }
}

/// The state of one replay: the objects the replayed calls made, and the audio rendered so far.
private struct ReplayRun {
    let session: SharedSession
    let engine: ReplayEngine
    let format: AudioFormat
    var quantum: Int
    let source: @Sendable (StreamDescriptor) -> any AudioSource

    /// The handles of the streams the replay opened, kept so none is closed by being dropped.
    var handles: [StreamID: StreamHandle] = [:]
    /// Errors a replayed stream open made the session reject by itself: the recording's next
    /// `rejected` inputs are their record, not calls to replay.
    var ownRejections: [SessionError] = []
    var mismatches: [ReplayMismatch] = []
    var mainStreams: [StreamID] = []

    var position = 0
    var mix: [Float] = []
    var stems: [StreamID: [Float]] = [:]

    init(
        session: SharedSession, engine: ReplayEngine, format: AudioFormat, quantum: Int,
        source: @escaping @Sendable (StreamDescriptor) -> any AudioSource
    ) {
        self.session = session
        self.engine = engine
        self.format = format
        self.quantum = quantum
        self.source = source
    }

    var rendered: RenderedAudio {
        let length = position * format.channels
        return RenderedAudio(
            frames: position, mix: mix,
            stems: stems.mapValues { $0 + [Float](repeating: 0, count: length - $0.count) })
    }

    mutating func render(upTo frame: Int) throws(SessionError) {
        while position < frame {
            let block = try engine.offline.render(frames: min(quantum, frame - position))
            let before = position * format.channels
            for (id, stem) in block.stems {
                var kept = stems[id] ?? []
                if kept.count < before { kept += [Float](repeating: 0, count: before - kept.count) }
                kept += stem
                stems[id] = kept
            }
            mix += block.mix
            position += block.frames
        }
    }

    private mutating func note(_ line: Int, recorded: String, replayed: String) {
        mismatches.append(ReplayMismatch(line: line, recorded: recorded, replayed: replayed))
    }

    /// Replays one input: a fold. Every input goes down the session's road as the request it was
    /// recorded from, and the ids the session gives are checked against the recorded ones, except the
    /// few that need more than the input: a stream to open needs its source, an engine event comes
    /// from the engine, and the engine's answers are given when the session asks.
    mutating func apply(_ input: SessionInput, line: Int) {
        let recordedStream = input.stream.map { "\($0)" } ?? "no stream"
        switch input.request {
        case .openStream(let descriptor, let owner, let volume, let isMain):
            do {
                let handle =
                    isMain
                    ? try session.openMainStream(descriptor, source: source(descriptor))
                    : try session.openStream(descriptor, source: source(descriptor), volume: volume, owner: owner)
                handles[handle.id] = handle
                if isMain { mainStreams.append(handle.id) }
                if handle.id != input.stream { note(line, recorded: recordedStream, replayed: "\(handle.id)") }
            } catch {
                ownRejections.append(error)
                note(line, recorded: "\(recordedStream) opened", replayed: "refused: \(error.message)")
            }
        case .openStreamRefused(let descriptor, _):
            do {
                let handle = try session.openStream(descriptor, source: source(descriptor))
                handles[handle.id] = handle
                note(line, recorded: "\(descriptor.name) refused", replayed: "\(handle.id) opened")
            } catch {
                ownRejections.append(error)
            }
        case .engine(let event):
            if case .quantumChanged(let frames) = event, frames >= 1, frames <= AudioFormat.maximumQuantum {
                quantum = frames
            }
            engine.post(event)
        case .activationOutcome, .captureOutcome:
            // The replay engine gives these answers when the session asks.
            break
        case .rejected(let error) where !ownRejections.isEmpty:
            // A stream open above was refused here too, and the session rejected it by itself: this
            // line is its record, not a call to replay.
            let own = ownRejections.removeFirst()
            if own != error { note(line, recorded: "rejected \(error)", replayed: "rejected \(own)") }
        default:
            let made = session.submitRecorded(input)
            let id = input.lease
            switch input.request {
            case .acquire where made != id:
                note(line, recorded: id.map { "\($0)" } ?? "no lease", replayed: made.map { "\($0)" } ?? "no lease")
            case .duck where made != id:
                note(
                    line, recorded: id.map { "duck \($0)" } ?? "duck refused",
                    replayed: made.map { "duck \($0)" } ?? "duck refused")
            default: break
            }
        }
    }
}

/// A stream's gain at one of the recording's levels lines, as recorded and as replayed.
public struct LevelComparison: Sendable, Hashable {
    /// The recording's line.
    public let line: Int
    /// The label the recorder gave it.
    public let label: String
    /// The stream.
    public let stream: StreamID
    /// The gain the recorded render side had reached.
    public let recorded: Float
    /// The gain the replay's render side had reached, or `nil` if the stream was not open.
    public let replayed: Float?

    /// Creates a comparison.
    public init(line: Int, label: String, stream: StreamID, recorded: Float, replayed: Float?) {
        self.line = line
        self.label = label
        self.stream = stream
        self.recorded = recorded
        self.replayed = replayed
    }

    /// The replayed gain's difference from the recorded one in dB; 0 when both are below −100 dB.
    public var difference: Float? {
        guard let replayed else { return nil }
        func decibels(_ gain: Float) -> Float { 20 * log10(max(gain, 1e-5)) }
        return decibels(replayed) - decibels(recorded)
    }

    /// Whether the replay reached the recorded gain within 0.1 dB.
    public var matched: Bool { difference.map { abs($0) < 0.1 } ?? false }
}

/// Where a replay differed from its recording.
public struct ReplayMismatch: Sendable, Hashable, CustomStringConvertible {
    /// The recording's line of what was expected, if there was one.
    public let line: Int?
    /// What the recording holds there, or `nil` if the replay did something more.
    public let recorded: String?
    /// What the replay did instead, or `nil` if it did not do it.
    public let replayed: String?

    /// Creates a mismatch.
    public init(line: Int?, recorded: String?, replayed: String?) {
        self.line = line
        self.recorded = recorded
        self.replayed = replayed
    }

    public var description: String {
        let place = line.map { "line \($0): " } ?? ""
        return "\(place)recorded \(recorded ?? "nothing"), replayed \(replayed ?? "nothing")"
    }
}

/// What a replay produced: its events, how they compare with the recorded ones, and the audio.
public struct ReplayResult: Sendable {
    /// The events the replay session emitted, in order.
    public let events: [SessionEvent]
    /// The events the recording holds, in order.
    public let recordedEvents: [SessionEvent]
    /// Every difference between the replay and the recording: inputs, events (compared in
    /// ``normalized(_:)`` form), levels, and engine answers. Empty when the replay reproduced the
    /// recording.
    public let mismatches: [ReplayMismatch]
    /// The gains the recording's levels lines hold, each with the gain the replay's render side had
    /// reached at the same frame.
    public let levels: [LevelComparison]
    /// The replay's audio from its first frame: the mix, and every stream's stem, zero where the
    /// stream was not open.
    public let rendered: RenderedAudio
    /// The main streams the replay opened, in order.
    public let mainStreams: [StreamID]

    /// Whether the replay reproduced the recording: no mismatches.
    public var matched: Bool { mismatches.isEmpty }

    /// The first channel of `stream`'s stem at `frame`: with the default stand-in (a constant 1), the
    /// gain the session applied there. `nil` past the end of the replay or for a stream it never played.
    public func level(of stream: StreamID, atFrame frame: Int) -> Float? {
        guard let stem = rendered.stems[stream], frame >= 0, frame < rendered.frames else { return nil }
        let channels = rendered.frames > 0 ? stem.count / rendered.frames : 1
        return stem[frame * channels]
    }

    /// The first main stream's level at `frame` (see ``level(of:atFrame:)``).
    public func mainLevel(atFrame frame: Int) -> Float? {
        mainStreams.first.flatMap { level(of: $0, atFrame: frame) }
    }

    /// An event in the form replays compare: its JSON with sorted keys, without instants (when a
    /// lease was acquired, when a duck's deadline falls), which differ from run to run.
    public static func normalized(_ event: SessionEvent) -> String {
        guard let data = try? RecordingFormat.normalizingEncoder().encode(event) else { return "\(event)" }
        return String(decoding: data, as: UTF8.self)
    }
}
