import Foundation
import SharedSession
import SharedSessionRemote
import SharedSessionTestSupport
import Testing

extension RemoteTests {
    /// Version 1 of the wire, pinned by a transcript: `Fixtures/v1-transcript.txt` holds the lines a
    /// version 1 unit sent (`unit …`) and the lines the version 1 host answered (`host …`), as the host
    /// of SharedSession before version 2 wrote them. The unit's lines are sent again, by hand, to a new
    /// host: it must answer them with the same lines, byte for byte but for the instants.
    @Suite("The wire's version 1, replayed from a transcript")
    struct VersionOneTranscriptTests {
        static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appending(path: "Fixtures/v1-transcript.txt")

        /// Instants travel as seconds since the machine booted: compared as this.
        static func normalized(_ line: String) -> String {
            line.replacing(#/"([a-z]*At|deadline)":[0-9.e+-]+/#) { match in "\"\(match.1)\":0" }
        }

        /// The host's lines in two orders that hold on any machine: its answers in the order of the
        /// requests, and the session's events in the order the session emitted them. (An answer and an
        /// event take different threads to the socket, so how they interleave is not the wire's.) The
        /// events are those heard before the unit's last line, the leave: what the leave releases is
        /// emitted as the host closes, and whether it reaches the unit before the close is a race.
        static func split(_ lines: [String]) -> (answers: [String], events: [String]) {
            let host = lines.map(normalized)
            let last = host.lastIndex { $0.hasPrefix("unit ") } ?? host.endIndex
            let isEvent = { (line: String) in line.hasPrefix(#"host {"event""#) }
            return (host.filter { $0.hasPrefix("host ") && !isEvent($0) }, host[..<last].filter(isEvent))
        }

        @Test("a version 1 unit's lines get the answers and events a version 1 host gave them")
        func versionOneUnitIsAnsweredAsBefore() throws {
            let transcript = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n").map(
                String.init)
            let sent = transcript.filter { $0.hasPrefix("unit ") }.map { String($0.dropFirst(5)) }
            #expect(sent.count >= 10, "the transcript was not found at \(Self.fixture.path)")

            let rig = try RemoteRig("transcript")
            let raw = try UnitProcess(["--raw", "--socket", rig.server.path])
            var heard: [String] = []
            for line in sent {
                heard.append("unit \(line)")
                raw.send("raw \(line)")
                // Up to and with its answer (every line of the transcript is answered).
                while true {
                    let answer = try raw.line()
                    heard.append(answer)
                    if !answer.hasPrefix(#"host {"event""#) { break }
                }
            }
            // What follows the leave's answer, to the close (the raw unit's "host closed", not a line).
            while heard.last != "host closed" { heard.append(try raw.line()) }

            heard.removeLast()
            let expected = Self.split(transcript)
            let actual = Self.split(heard)
            #expect(actual.answers == expected.answers, "heard:\n\(heard.joined(separator: "\n"))")
            #expect(actual.events == expected.events, "heard:\n\(heard.joined(separator: "\n"))")
        }
    }
}
