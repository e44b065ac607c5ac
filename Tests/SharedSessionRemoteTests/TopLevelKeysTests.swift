import Foundation
import SharedSession
import Testing

@testable import SharedSessionRemote

extension RemoteTests {
    /// A unit that nobody listens to skips the host's event lines by their one key, read by a scan of the
    /// line's structure instead of a full decode; every other line is decoded in full as before.
    @Suite("A host line's keys, without decoding it")
    struct TopLevelKeysTests {
        @Test("the keys are the object's own, in order, whatever the strings and nesting inside hold")
        func keys() {
            #expect(TopLevelKeys.of(Array(#"{"event":{"kind":"duck","owner":"a \"reply\" b"}}"#.utf8)) == ["event"])
            #expect(
                TopLevelKeys.of(Array(#" { "reply" : 3 , "granted" : {"lease": 12, "type": "voice"} } "#.utf8))
                    == ["reply", "granted"])
            #expect(
                TopLevelKeys.of(Array(#"{"event": {"a": [1, {"reply": 2}, "}"]}, "reply": 1}"#.utf8))
                    == ["event", "reply"])
            #expect(TopLevelKeys.of(Array("{}".utf8)) == [])
            for broken in [
                #"{"event": {"a": 1}"#, #"{"event": "x}"#, #"{"event": 1} x"#, "[1]", #"{"event"}"#,
                #"{"event":}"#, #"{"event": 1,}"#, "", #"{"event": "\"#,
            ] {
                #expect(TopLevelKeys.of(Array(broken.utf8)) == nil, "\(broken)")
            }
        }

        @Test("a line is an event alone when its keys are just that one, read in place or copied")
        func isOnly() {
            let lines = [
                #"{"event":{"kind":"duck","owner":"a \"reply\" b"}}"#, #" { "event" : 1 } "#,
                #"{"event": {"a": [1, {"reply": 2}, "}"]}, "reply": 1}"#, #"{"reply": 1, "event": {}}"#,
                #"{"events": 1}"#, #"{"even": 1}"#, "{}", #"{"event": {"a": 1}"#, #"{"event": 1} x"#, "",
            ]
            for line in lines {
                let bytes = Array(line.utf8)
                let expected = TopLevelKeys.of(bytes) == ["event"]
                #expect(TopLevelKeys.isOnly("event", in: bytes) == expected, "\(line)")
                // Not contiguous: read through a copy, with the same answer.
                #expect(TopLevelKeys.isOnly("event", in: bytes.lazy.map { $0 }) == expected, "\(line)")
            }
        }

        @Test("every line a host writes, of either version, has the keys JSONSerialization finds in it")
        func agreesWithFoundation() throws {
            let event = SessionEvent(
                .releaseIgnored(owner: "feed \"x\"", what: "a duck {with} [brackets], \\ and a \\\"quote"),
                cause: .unit(owner: "feed"))
            let messages: [HostMessage] = [
                .event(event), .reply(id: 7, .granted(LeaseID(rawValue: 12), type: .voice)),
                .reply(id: 8, .done),
                .reply(id: 9, .failed(SessionError(code: .limitExceeded, message: "over \"the\" {limit}"))),
            ]
            for version in 1...2 {
                for message in messages {
                    var line = RemoteProtocol.encode(message, version: version)
                    if line.last == UInt8(ascii: "\n") { line.removeLast() }
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
                    let keys = try #require(TopLevelKeys.of(line), "\(String(decoding: line, as: UTF8.self))")
                    #expect(Set(keys) == Set(object.keys) && keys.count == object.count, "version \(version)")
                }
            }
        }

        @Test("an event line is skipped unread, but a line with an event and a reply is still refused")
        func unreadEventAndTwoMessages() throws {
            let event = Array(#"{"event": {"kind": "anything at all"}}"#.utf8)
            guard case .unreadEvent = try RemoteProtocol.readHostLine(event, version: 2, decodingEvents: false) else {
                Issue.record("an event line was not skipped")
                return
            }
            let both = Array(#"{"event": {"kind": "x"}, "reply": 1, "done": {}}"#.utf8)
            #expect(throws: SessionError.self) {
                try RemoteProtocol.readHostLine(both, version: 2, decodingEvents: false)
            }
            let reply = Array(#"{"reply": 3, "done": {}}"#.utf8)
            guard
                case .message(.reply(3, .done)) = try RemoteProtocol.readHostLine(
                    reply, version: 2, decodingEvents: false)
            else {
                Issue.record("a reply was not read")
                return
            }
        }
    }
}
