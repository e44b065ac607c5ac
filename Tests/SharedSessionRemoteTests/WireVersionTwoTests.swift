import SharedSession
import SharedSessionRemote
import SharedSessionTestSupport
import Testing

extension RemoteTests {
    /// Version 2 of the wire: each request named by its key, with no owner (the connection's is used)
    /// and no placeholder lease; each reply's outcome named by its key.
    @Suite("The wire's version 2")
    struct WireVersionTwoTests {
        static let owner = "watch-party"

        /// Each line a version 2 unit writes, and the request it means.
        static let lines: [(line: String, message: UnitMessage)] = [
            (#"{"acquire":{"type":"voice"},"id":1}"#, .request(id: 1, .acquire(.voice, owner: owner))),
            (
                #"{"id":2,"releaseLease":{"dropped":false,"lease":12}}"#,
                .request(id: 2, .releaseLease(LeaseID(rawValue: 12), dropped: false))
            ),
            (
                #"{"duck":{"style":{"kind":"duck"}},"id":4}"#,
                .request(id: 4, .duck(DuckRequest(owner: owner, style: .duck(level: nil))))
            ),
            (
                #"{"duck":{"maximumHold":1.5,"style":{"kind":"followActivity","level":0.25,"#
                    + #""source":{"kind":"stream","stream":4}}},"id":5}"#,
                .request(
                    id: 5,
                    .duck(
                        DuckRequest(
                            owner: owner, style: .followActivity(.stream(StreamID(rawValue: 4)), level: 0.25),
                            maximumHold: .milliseconds(1500))))
            ),
            (
                #"{"duck":{"style":{"kind":"pause"}},"id":6}"#,
                .request(id: 6, .duck(DuckRequest(owner: owner, style: .pause)))
            ),
            (
                #"{"id":9,"releaseDuck":{"dropped":true,"lease":15}}"#,
                .request(id: 9, .releaseDuck(LeaseID(rawValue: 15), dropped: true))
            ),
            (
                #"{"id":10,"ignoredRelease":{"what":"disableAudioDucking() without a duck"}}"#,
                .request(id: 10, .ignoredRelease(owner: owner, what: "disableAudioDucking() without a duck"))
            ),
            (#"{"id":20,"snapshot":{}}"#, .request(id: 20, .snapshot)),
            (#"{"id":21,"leave":{}}"#, .request(id: 21, .leave)),
            (#"{"hello":{"owner":"watch-party","protocol":2}}"#, .hello(protocolVersion: 2, owner: owner)),
        ]

        @Test("a version 2 unit's lines decode to their requests under the connection's owner, and encode back")
        func linesDecodeAndEncode() throws {
            for (line, message) in Self.lines {
                #expect(
                    try RemoteProtocol.decodeUnitLine(Array(line.utf8), version: 2, owner: Self.owner) == message,
                    "\(line)")
                #expect(
                    String(decoding: RemoteProtocol.encode(message, version: 2), as: UTF8.self) == line + "\n",
                    "\(message)")
            }
        }

        @Test("no version 2 request carries an owner or a placeholder lease")
        func noPlaceholders() {
            for (_, message) in Self.lines {
                guard case .request = message else { continue }
                let written = String(decoding: RemoteProtocol.encode(message, version: 2), as: UTF8.self)
                #expect(!written.contains(#""owner""#), "\(written)")
                #expect(!written.contains(#""lease":0"#), "\(written)")
                #expect(!written.contains(#""input""#), "\(written)")
            }
        }

        @Test("a style left out is a plain duck, and a hold must be a duration")
        func duckDefaults() throws {
            #expect(
                try RemoteProtocol.decodeUnitLine(Array(#"{"id":1,"duck":{}}"#.utf8), version: 2, owner: "a")
                    == .request(id: 1, .duck(DuckRequest(owner: "a", style: .duck(level: nil)))))
            let error = #expect(throws: SessionError.self) {
                try RemoteProtocol.decodeUnitLine(
                    Array(#"{"id":1,"duck":{"maximumHold":"soon"}}"#.utf8), version: 2, owner: "a")
            }
            #expect(
                error?.message.contains("malformed duck message: duck.maximumHold") == true,
                "\(String(describing: error))")
        }

        @Test("each version reads its own lines: the other's requests are unknown messages naming what it sends")
        func versionsDoNotMix() throws {
            let versionOne = #"{"id":1,"input":{"kind":"acquire","lease":0,"owner":"a","type":"voice"}}"#
            let asTwo = #expect(throws: SessionError.self) {
                try RemoteProtocol.decodeUnitLine(Array(versionOne.utf8), version: 2, owner: "a")
            }
            #expect(
                asTwo?.message.hasPrefix(
                    #"unknown message with keys ["id", "input"]: a unit of protocol version 2 sends"#) == true)
            let versionTwo = #"{"acquire":{"type":"voice"},"id":1}"#
            let asOne = #expect(throws: SessionError.self) { try RemoteProtocol.decodeUnitLine(Array(versionTwo.utf8)) }
            #expect(asOne?.message.contains("a unit sends hello, input, snapshot or leave") == true)
            let twoKinds = #expect(throws: SessionError.self) {
                try RemoteProtocol.decodeUnitLine(
                    Array(#"{"acquire":{"type":"voice"},"duck":{},"id":1}"#.utf8), version: 2, owner: "a")
            }
            #expect(twoKinds?.message.contains("one line holds acquire and duck") == true)
        }

        @Test("a reply names its outcome: granted, snapshot, done or failed, exactly one")
        func replies() throws {
            let error = SessionError(code: .limitExceeded, message: "too many")
            let replies: [(line: String, message: HostMessage)] = [
                (
                    #"{"granted":{"lease":12,"type":"voice"},"reply":3}"#,
                    .reply(id: 3, .granted(LeaseID(rawValue: 12), type: .voice))
                ),
                (#"{"granted":{"lease":13},"reply":4}"#, .reply(id: 4, .granted(LeaseID(rawValue: 13), type: nil))),
                (#"{"done":{},"reply":5}"#, .reply(id: 5, .done)),
                (#"{"failed":{"code":"limitExceeded","message":"too many"},"reply":6}"#, .reply(id: 6, .failed(error))),
            ]
            for (line, message) in replies {
                #expect(String(decoding: RemoteProtocol.encode(message, version: 2), as: UTF8.self) == line + "\n")
                #expect(try RemoteProtocol.decodeHostLine(Array(line.utf8), version: 2) == message, "\(line)")
            }
            for line in [#"{"reply":5}"#, #"{"done":{},"failed":{"code":"limitExceeded","message":"x"},"reply":5}"#] {
                #expect(throws: SessionError.self, "\(line)") {
                    try RemoteProtocol.decodeHostLine(Array(line.utf8), version: 2)
                }
            }
            // Version 1 as it was: the outcome by the fields beside `reply`.
            #expect(
                String(decoding: RemoteProtocol.encode(HostMessage.reply(id: 5, .done)), as: UTF8.self)
                    == #"{"reply":5}"# + "\n")
        }

        @Test("a host answers a version 2 unit in version 2, under the connection's owner")
        func hostAnswersInVersionTwo() throws {
            let rig = try RemoteRig("version-2")
            let raw = try UnitProcess(["--raw", "--socket", rig.server.path])
            let welcome = try raw.answer(#"raw {"hello":{"owner":"two","protocol":2}}"#)
            #expect(welcome.hasPrefix(#"host {"welcome":"#) && welcome.contains(#""protocol":2"#), "\(welcome)")

            let acquire = try raw.answer(#"raw {"id":1,"acquire":{"type":"voice"}}"#)
            #expect(
                acquire.hasPrefix(#"host {"granted":{"lease":"#) && acquire.hasSuffix(#""type":"voice"},"reply":1}"#),
                "\(acquire)")
            let duck = try raw.answer(#"raw {"id":2,"duck":{"style":{"kind":"pause"}}}"#)
            #expect(duck.hasPrefix(#"host {"granted":{"lease":"#) && duck.hasSuffix(#"},"reply":2}"#), "\(duck)")
            let snapshot = rig.session.snapshot
            #expect(snapshot.leases.map(\.owner) == ["two"])
            #expect(snapshot.ducks.map(\.owner) == ["two"])

            let duckID = snapshot.ducks[0].id.rawValue
            #expect(
                try raw.answer(#"raw {"id":3,"releaseDuck":{"lease":\#(duckID),"dropped":false}}"#)
                    == #"host {"done":{},"reply":3}"#)
            #expect(rig.session.snapshot.ducks.isEmpty)
            // As in version 1: a release of what it no longer holds is done, and recorded as ignored.
            #expect(
                try raw.answer(#"raw {"id":4,"releaseDuck":{"lease":\#(duckID),"dropped":false}}"#)
                    == #"host {"done":{},"reply":4}"#)
            let state = try raw.answer(#"raw {"id":5,"snapshot":{}}"#)
            #expect(state.hasPrefix(#"host {"reply":5,"snapshot":{"#), "\(state)")
            // A version 1 request on a version 2 connection is refused, naming what version 2 sends.
            let old = try raw.answer(#"raw {"id":6,"input":{"kind":"acquire","lease":0,"owner":"two","type":"voice"}}"#)
            #expect(old.contains(#""reply":6"#) && old.contains("a unit of protocol version 2 sends"), "\(old)")
            #expect(try raw.answer(#"raw {"id":7,"leave":{}}"#) == #"host {"done":{},"reply":7}"#)
            #expect(rig.session.snapshot.leases.isEmpty)
        }

        @Test("a RemoteSession speaks version 2")
        func clientSpeaksVersionTwo() throws {
            let rig = try RemoteRig("client-2")
            let remote = try RemoteSession(path: rig.server.path, owner: "client")
            #expect(remote.welcome.protocolVersion == 2)
            let lease = try remote.acquire(.voice)
            #expect(rig.session.snapshot.leases.map(\.id) == [lease.id])
            try lease.release()
            remote.leave()
        }
    }
}
