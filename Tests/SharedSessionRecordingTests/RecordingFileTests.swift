import Foundation
import SharedSession
import SharedSessionRecording
import Testing

/// The file side of recordings: what a reader refuses, with the line and the reason, and the JSON
/// form of every input, event and policy, which must read back as it was written.
@Suite("Recording files: refused when malformed, every value read back as written")
struct RecordingFileTests {
    // MARK: Refused recordings

    /// The header line a recorder writes for a session with the default policy.
    static func header() throws -> String {
        let run = try RecordedRun()
        let recording = try String(contentsOf: run.url, encoding: .utf8)
        try run.recorder.stop()
        return String(recording.split(separator: "\n")[0])
    }

    static func refusal(_ text: String) -> SessionError? {
        do {
            _ = try SessionRecording(parsing: text)
            return nil
        } catch {
            return error
        }
    }

    @Test("a malformed line is refused with its line number and what is wrong")
    func malformedLine() throws {
        let header = try Self.header()
        let acquire = #"{"t":0.1,"frame":0,"input":{"kind":"acquire","type":"generic","owner":"feed","lease":1}}"#
        let bad = Self.refusal([header, acquire, #"{"t":0.2,"input":{"kind":"duck","#].joined(separator: "\n"))
        #expect(bad?.code == .invalidRecording)
        #expect(bad?.message.hasPrefix("line 3: not valid JSON") == true, "\(String(describing: bad))")
        let missing = Self.refusal(
            [header, acquire, #"{"t":0.2,"input":{"kind":"acquire","owner":"feed","lease":2}}"#].joined(separator: "\n")
        )
        #expect(
            missing?.message.hasPrefix("line 3: missing field \"type\" in input") == true,
            "\(String(describing: missing))")
        let unknown = Self.refusal([header, #"{"t":0.2,"input":{"kind":"explode"}}"#].joined(separator: "\n"))
        #expect(
            unknown?.message.hasPrefix("line 2: input.kind: unknown input kind \"explode\"") == true,
            "\(String(describing: unknown))")
        let noTime = Self.refusal([header, #"{"input":{"kind":"play"}}"#].joined(separator: "\n"))
        #expect(noTime?.message.hasPrefix("line 2: missing field \"t\"") == true, "\(String(describing: noTime))")
    }

    @Test("a recording of a newer format version is refused on line 1")
    func newerVersion() throws {
        let header = try Self.header().replacingOccurrences(of: #""version":1"#, with: #""version":2"#)
        let error = Self.refusal(header + "\n" + #"{"t":0,"input":{"kind":"play"}}"#)
        #expect(error?.code == .invalidRecording)
        #expect(error?.message.hasPrefix("line 1: format version 2 is newer") == true, "\(String(describing: error))")
        let other = Self.refusal(#"{"format":"wav","version":1}"#)
        #expect(other?.message.hasPrefix("line 1: format \"wav\" is not a session recording") == true)
    }

    @Test("a recording that releases a lease or closes a stream it never opened is refused with the line")
    func unknownLease() throws {
        let header = try Self.header()
        let lines = [
            header,
            #"{"t":0.1,"input":{"kind":"acquire","type":"generic","owner":"feed","lease":1}}"#,
            #"{"t":0.2,"input":{"kind":"releaseLease","lease":1,"dropped":false}}"#,
            #"{"t":0.3,"input":{"kind":"releaseDuck","lease":7,"dropped":false}}"#,
        ]
        let error = Self.refusal(lines.joined(separator: "\n"))
        #expect(error?.code == .invalidRecording)
        #expect(error?.message.hasPrefix("line 4: releaseDuck names lease#7, which the recording never opened") == true)
        let stream = Self.refusal(
            [header, #"{"t":0.1,"input":{"kind":"closeStream","stream":3}}"#].joined(separator: "\n"))
        #expect(stream?.message.hasPrefix("line 2: closeStream names stream#3") == true)
        // The well-formed part alone is accepted.
        #expect(Self.refusal(lines.prefix(3).joined(separator: "\n")) == nil)
    }

    // MARK: JSON forms

    static let everyInput: [SessionInput] = {
        let descriptor = StreamDescriptor(
            name: "far end", role: .communication, isBackgroundMusic: true, target: "bluez_output.1", isExempt: true)
        return [
            SessionInput(.acquire(.voice, owner: "chat"), handedOut: .lease(LeaseID(rawValue: 3))),
            SessionInput(.releaseLease(LeaseID(rawValue: 3), dropped: true)),
            SessionInput(
                .duck(
                    DuckRequest(owner: "feed", style: .duck(level: 0.2), maximumHold: .milliseconds(1500))),
                handedOut: .lease(LeaseID(rawValue: 4))),
            SessionInput(.duck(DuckRequest(owner: "feed"))),
            SessionInput(.duck(DuckRequest(owner: "feed", style: .pause)), handedOut: .lease(LeaseID(rawValue: 5))),
            SessionInput(
                .duck(
                    DuckRequest(owner: "chat", style: .followActivity(.stream(StreamID(rawValue: 2)), level: nil))),
                handedOut: .lease(LeaseID(rawValue: 6))),
            SessionInput(
                .duck(
                    DuckRequest(owner: "chat", style: .followActivity(.voiceInput, level: 0.3))),
                handedOut: .lease(LeaseID(rawValue: 7))),
            SessionInput(
                .duck(
                    DuckRequest(owner: "chat", style: .followLoudness(StreamID(rawValue: 2), margin: 14))),
                handedOut: .lease(LeaseID(rawValue: 8))),
            SessionInput(
                .duck(
                    DuckRequest(owner: "chat", style: .followLoudness(StreamID(rawValue: 2), margin: nil))),
                handedOut: .lease(LeaseID(rawValue: 9))),
            SessionInput(.releaseDuck(LeaseID(rawValue: 4), dropped: false)),
            SessionInput(.expireDeadlines),
            SessionInput(.setMainVolume(0.7)),
            SessionInput(.play),
            SessionInput(.pause),
            SessionInput(.suspend(renderAnyway: true)),
            SessionInput(.wakeFromSuspend),
            SessionInput(.system(.interruptionBegan)),
            SessionInput(.system(.interruptionEnded(shouldResume: false))),
            SessionInput(
                .system(
                    .routeChanged(
                        RouteChange(reason: .oldDeviceUnavailable, previousOutput: "headphones", currentOutput: nil)))),
            SessionInput(.system(.didEnterBackground)),
            SessionInput(.system(.willEnterForeground)),
            SessionInput(.system(.otherAudioStarted)),
            SessionInput(.system(.otherAudioStopped)),
            SessionInput(.engine(.system(.routeChanged(RouteChange(reason: .override))))),
            SessionInput(.engine(.externalVolumeChange(stream: StreamID(rawValue: 1), volume: 0.25))),
            SessionInput(.engine(.streamFault(stream: StreamID(rawValue: 1), reason: "xrun"))),
            SessionInput(.engine(.connectionLost(reason: "server gone"))),
            SessionInput(.engine(.reconnected(attempts: 3, downtime: .milliseconds(850)))),
            SessionInput(.engine(.quantumChanged(frames: 4096))),
            SessionInput(
                .openStream(descriptor, owner: "chat", volume: 0.8, isMain: false),
                handedOut: .stream(StreamID(rawValue: 2))),
            SessionInput(
                .openStream(
                    StreamDescriptor(name: "main", role: .movie), owner: nil, volume: 1, isMain: true),
                handedOut: .stream(StreamID(rawValue: 1))),
            SessionInput(.openStreamRefused(descriptor, message: "no such sink")),
            SessionInput(.closeStream(StreamID(rawValue: 2))),
            SessionInput(.setStreamVolume(StreamID(rawValue: 2), 0.4)),
            SessionInput(
                .ignoredRelease(
                    owner: "feed", what: "released twice", cause: .duckLease(LeaseID(rawValue: 4), owner: "feed"))),
            SessionInput(.ignoredRelease(owner: "feed", what: "unbalanced", cause: .unit(owner: "feed"))),
            SessionInput(
                .ignoredRelease(owner: "feed", what: "twice", cause: .sessionLease(LeaseID(rawValue: 3), owner: "chat"))
            ),
            SessionInput(.ignoredRelease(owner: "host", what: "x", cause: .host)),
            SessionInput(.ignoredRelease(owner: "host", what: "y", cause: .system(.otherAudioStarted))),
            SessionInput(.ignoredRelease(owner: "host", what: "z", cause: .engine(.quantumChanged(frames: 256)))),
            SessionInput(.rejected(SessionError(code: .limitExceeded, message: "feed asked for too much"))),
            SessionInput(.activationOutcome(.voice, refused: nil)),
            SessionInput(.activationOutcome(try! SessionConfiguration(category: .ambient), refused: "busy")),
            SessionInput(.captureOutcome(refused: nil)),
            SessionInput(.captureOutcome(refused: "no microphone")),
            SessionInput(.unitReleased(owner: "feed", reason: "torn down")),
            SessionInput(.close),
        ]
    }()

    @Test("every kind of input survives a trip through JSON")
    func inputRoundTrip() throws {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        for input in Self.everyInput {
            let data = try encoder.encode(input)
            let decoded = try decoder.decode(SessionInput.self, from: data)
            #expect(decoded == input, "\(String(decoding: data, as: UTF8.self))")
        }
        // Readable: enum cases as {"kind": ...}.
        let json = String(decoding: try encoder.encode(Self.everyInput[2]), as: UTF8.self)
        #expect(json.contains(#""kind":"duck""#))
        #expect(json.contains(#""maximumHold":1.5"#))
    }

    @Test("every event of a recorded session, and the policy, survive a trip through JSON")
    func eventAndPolicyRoundTrip() async throws {
        let (run, recording) = try await ReplayTests.recordEverything()
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        for event in run.events.events {
            let decoded = try decoder.decode(SessionEvent.self, from: try encoder.encode(event))
            #expect(decoded.kind.withoutInstants == event.kind.withoutInstants)
            #expect(decoded.cause == event.cause)
        }
        #expect(recording.policy == ReplayTests.policy)
        let policy = try SessionPolicy(
            genericConfiguration: try SessionConfiguration(category: .ambient), duckLevel: 0.3,
            fadeDown: .milliseconds(80), fadeUp: .seconds(1), suspendInBackground: true, duckWhenOtherAudioPlays: true,
            notifyOthersOnDeactivation: false,
            unitLimits: ["x": try UnitLimits(deepestDuckLevel: 0.5, mayTakeVoice: false, maximumHold: .seconds(30))],
            voiceActivity: try VoiceActivityPolicy(threshold: -35, hold: .milliseconds(250)))
        #expect(try decoder.decode(SessionPolicy.self, from: try encoder.encode(policy)) == policy)
    }
}

extension SessionEvent.Kind {
    /// The kind in the form replays compare it, without its instants.
    var withoutInstants: String { ReplayResult.normalized(SessionEvent(self, cause: .host)) }
}
