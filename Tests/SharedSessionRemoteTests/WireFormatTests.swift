import SharedSession
import SharedSessionRemote
import Testing

extension RemoteTests {
    /// Protocol version 1 as units built before the wire had a request type of its own wrote it: the
    /// lines below are what the old encoder (a unit's request as the session's recorded input) wrote,
    /// byte for byte. A unit built from that code must still be understood, and a new unit must write
    /// the same bytes.
    @Suite("The unit's wire format, version 1")
    struct WireFormatTests {
        static let owner = "watch-party"

        /// Each line the old encoder wrote, and the request it means.
        static let lines: [(line: String, message: UnitMessage)] = [
            (
                #"{"id":1,"input":{"kind":"acquire","lease":0,"owner":"watch-party","type":"voice"}}"#,
                .request(id: 1, .acquire(.voice, owner: owner))
            ),
            (
                #"{"id":2,"input":{"dropped":false,"kind":"releaseLease","lease":12}}"#,
                .request(id: 2, .releaseLease(LeaseID(rawValue: 12), dropped: false))
            ),
            (
                #"{"id":3,"input":{"dropped":true,"kind":"releaseLease","lease":13}}"#,
                .request(id: 3, .releaseLease(LeaseID(rawValue: 13), dropped: true))
            ),
            (
                #"{"id":4,"input":{"kind":"duck","lease":0,"request":{"owner":"watch-party","style":{"kind":"duck"}}}}"#,
                .request(id: 4, .duck(DuckRequest(owner: owner, style: .duck(level: nil))))
            ),
            (
                #"{"id":5,"input":{"kind":"duck","lease":0,"request":{"maximumHold":1.5,"owner":"watch-party","#
                    + #""style":{"kind":"followActivity","level":0.25,"source":{"kind":"stream","stream":4}}}}}"#,
                .request(
                    id: 5,
                    .duck(
                        DuckRequest(
                            owner: owner, style: .followActivity(.stream(StreamID(rawValue: 4)), level: 0.25),
                            maximumHold: .milliseconds(1500))))
            ),
            (
                #"{"id":6,"input":{"kind":"duck","lease":0,"request":{"owner":"watch-party","style":{"kind":"pause"}}}}"#,
                .request(id: 6, .duck(DuckRequest(owner: owner, style: .pause)))
            ),
            (
                #"{"id":7,"input":{"kind":"duck","lease":0,"request":{"owner":"watch-party","#
                    + #""style":{"kind":"followActivity","source":{"kind":"voiceInput"}}}}}"#,
                .request(id: 7, .duck(DuckRequest(owner: owner, style: .followActivity(.voiceInput, level: nil))))
            ),
            (
                #"{"id":8,"input":{"dropped":false,"kind":"releaseDuck","lease":14}}"#,
                .request(id: 8, .releaseDuck(LeaseID(rawValue: 14), dropped: false))
            ),
            (
                #"{"id":9,"input":{"dropped":true,"kind":"releaseDuck","lease":15}}"#,
                .request(id: 9, .releaseDuck(LeaseID(rawValue: 15), dropped: true))
            ),
            (
                #"{"id":10,"input":{"cause":{"kind":"unit","owner":"watch-party"},"kind":"ignoredRelease","#
                    + #""owner":"watch-party","what":"disableAudioDucking() without a duck"}}"#,
                .request(id: 10, .ignoredRelease(owner: owner, what: "disableAudioDucking() without a duck"))
            ),
            (#"{"id":20,"snapshot":{}}"#, .request(id: 20, .snapshot)),
            (#"{"id":21,"leave":{}}"#, .request(id: 21, .leave)),
            (#"{"hello":{"owner":"watch-party","protocol":1}}"#, .hello(protocolVersion: 1, owner: owner)),
        ]

        @Test("an old unit's lines decode to the requests they meant")
        func oldLinesDecode() throws {
            for (line, message) in Self.lines {
                #expect(try RemoteProtocol.decodeUnitLine(Array(line.utf8)) == message, "\(line)")
            }
        }

        @Test("a new unit writes exactly the old unit's bytes, newline included")
        func newEncoderWritesOldBytes() {
            for (line, message) in Self.lines {
                #expect(
                    String(decoding: RemoteProtocol.encode(message), as: UTF8.self) == line + "\n", "\(message)")
            }
        }

        @Test("the fields a unit has no say in are read, not obeyed: any placeholder lease, any cause")
        func placeholdersIgnored() throws {
            let acquire = #"{"id":1,"input":{"kind":"acquire","lease":99,"owner":"a","type":"generic"}}"#
            #expect(
                try RemoteProtocol.decodeUnitLine(Array(acquire.utf8))
                    == .request(id: 1, .acquire(.generic, owner: "a")))
            let ignored = #"{"id":2,"input":{"cause":{"kind":"host"},"kind":"ignoredRelease","owner":"a","what":"x"}}"#
            #expect(
                try RemoteProtocol.decodeUnitLine(Array(ignored.utf8))
                    == .request(id: 2, .ignoredRelease(owner: "a", what: "x")))
            // Still required, as version 1 always had them.
            let noLease = #"{"id":3,"input":{"kind":"duck","request":{"owner":"a"}}}"#
            #expect(throws: SessionError.self) { try RemoteProtocol.decodeUnitLine(Array(noLease.utf8)) }
            let badCause =
                #"{"id":4,"input":{"cause":{"kind":"bogus"},"kind":"ignoredRelease","owner":"a","what":"x"}}"#
            #expect(throws: SessionError.self) { try RemoteProtocol.decodeUnitLine(Array(badCause.utf8)) }
        }

        @Test("an input only the host sends is refused as such, not as an unknown kind")
        func hostOnlyInputs() {
            for kind in ["setMainVolume", "play", "unitReleased", "openStream"] {
                let line = #"{"id":1,"input":{"kind":"\#(kind)"}}"#
                do {
                    _ = try RemoteProtocol.decodeUnitLine(Array(line.utf8))
                    Issue.record("\(kind) decoded")
                } catch {
                    #expect(error.code == .protocolViolation)
                    #expect(error.message.hasPrefix("a unit may not send the input \(kind): only acquire"))
                }
            }
        }
    }
}
