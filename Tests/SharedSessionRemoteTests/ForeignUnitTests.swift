import Foundation
import SharedSession
import SharedSessionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension RemoteTests {
    /// A unit written from the protocol's documentation alone, in Python, not on `RemoteSession`: its
    /// death is timed from the kill the test sends to the `unitReleased` input the host's session takes.
    @Suite("A unit written without the client library", .serialized)
    struct ForeignUnitTests {
        /// One render quantum at 1024 frames and 48 kHz.
        static let quantum = Duration.microseconds(21_333)

        /// The unit: the hello, a voice session and a duck as the SharedSessionRemote article's
        /// protocol section and `RemoteProtocol` describe them, one JSON object a line; then it prints
        /// `ready` and reads its events until it is killed.
        static let script = #"""
            import json, socket, sys
            path, owner = sys.argv[1], sys.argv[2]
            unit = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            unit.connect(path)
            lines = unit.makefile("rb")
            def send(message):
                unit.sendall((json.dumps(message) + "\n").encode())
            def wait(key, value=None):
                for line in lines:
                    message = json.loads(line)
                    if key in message and (value is None or message[key] == value):
                        return message
                    if "refused" in message:
                        sys.exit("refused: %s" % message["refused"])
                sys.exit("the host closed the connection")
            send({"hello": {"protocol": 1, "owner": owner}})
            wait("welcome")
            send({"id": 1, "input": {"kind": "acquire", "lease": 0, "owner": owner, "type": "voice"}})
            if "error" in wait("reply", 1): sys.exit("no voice session")
            send({"id": 2, "input": {"kind": "duck", "lease": 0, "request": {"owner": owner, "style": {"kind": "duck"}}}})
            if "error" in wait("reply", 2): sys.exit("no duck")
            print("ready", flush=True)
            for line in lines: pass
            """#

        static let python = "/usr/bin/python3"

        @Test(
            "a Python unit SIGKILLed 20 times: the host hears of each death within a quantum of the kill (median)",
            .enabled("needs /usr/bin/python3 (in CI this runs, and fails without it)") {
                access(ForeignUnitTests.python, X_OK) == 0 || Requirements.all
            })
        func killedForeignUnit() throws {
            let python = Self.python
            try #require(access(python, X_OK) == 0, "/usr/bin/python3 is not installed")
            let rig = try RemoteRig("python")
            rig.session.mainVolume = 0.8
            var delays: [Duration] = []
            for run in 0..<20 {
                let owner = "python-\(run)"
                let unit = try UnitProcess(["-c", Self.script, rig.server.path, owner], executable: python)
                #expect(try unit.line() == "ready", "run \(run)")
                #expect(rig.holders() == [owner])
                let killedAt = ContinuousClock.now
                _ = Glibc.kill(unit.pid, SIGKILL)
                unit.reap()
                try waitUntil("run \(run): the dead unit's release") { rig.unitReleased(owner) != nil }
                let released = try #require(rig.unitReleased(owner))
                delays.append(released - killedAt)
                #expect(rig.holders().isEmpty, "run \(run)")
                #expect(rig.session.snapshot.mainGain == 0.8, "run \(run)")
            }
            let sorted = delays.sorted()
            let median = sorted[sorted.count / 2]
            let milliseconds = sorted.map { String(format: "%.1f", $0.inSeconds * 1000) }
            print(
                "[measure] a Python unit SIGKILLed 20 times: unitReleased after the kill, median \(milliseconds[sorted.count / 2]) ms, worst \(milliseconds.last!) ms (all: \(milliseconds.joined(separator: " ")))"
            )
            #expect(median < Self.quantum, "median \(median) from the kill to unitReleased")
        }
    }
}
