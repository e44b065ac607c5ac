import Foundation
import SharedSession
import SharedSessionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension RemoteTests {
    /// Units written from the wire protocol's documentation alone, in Python, not on `RemoteSession`, in
    /// both versions of the wire: each joins, takes voice and ducks the movie (heard in the rendered
    /// audio), and is SIGKILLed. Its death is timed from outside the host: a second Python unit,
    /// `death-watch.py`, kills it and reads on its own clock when the session's events report it gone.
    @Suite("A unit written without the client library", .serialized)
    struct ForeignUnitTests {
        static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "Fixtures")
        static let python = "/usr/bin/python3"
        static let kills = 20

        /// One run's death as `death-watch.py` timed it, in milliseconds from its kill.
        struct Death {
            var released: Double
            var gain: Double
        }

        @Test(
            "a Python unit of either wire version SIGKILLed 20 times: its duck heard, its death reported to the host",
            .enabled("needs /usr/bin/python3 (in CI this runs, and fails without it)") {
                access(ForeignUnitTests.python, X_OK) == 0 || Requirements.all
            },
            arguments: [1, 2])
        func killedForeignUnit(version: Int) throws {
            let python = Self.python
            try #require(access(python, X_OK) == 0, "/usr/bin/python3 is not installed")
            let rig = try RemoteRig("python-v\(version)")
            rig.session.mainVolume = 0.8
            let watch = try UnitProcess(
                [Self.fixtures.appending(path: "death-watch.py").path, rig.server.path], executable: python)
            #expect(try watch.line() == "watching")
            var deaths: [Death] = []
            for run in 0..<Self.kills {
                let owner = "python-\(version)-\(run)"
                let unit = try UnitProcess(
                    [Self.fixtures.appending(path: "foreign-unit.py").path, rig.server.path, owner, "\(version)"],
                    executable: python)
                #expect(try unit.line() == "ready", "run \(run)")
                #expect(rig.holders() == [owner], "run \(run)")
                // The duck heard: the movie at the host's volume × the policy's duck level.
                let ducked = try rig.mainLevel(after: 400)
                #expect(
                    abs(ducked - RemoteRig.level(atGain: 0.08)) < 0.1,
                    "run \(run): the movie at \(ducked) dB under the unit's duck")
                watch.send("kill \(unit.pid) \(owner)")
                let report = try watch.line().split(separator: " ")
                unit.reap()
                try #require(report.count == 6 && report[0] == "dead", "run \(run): \(report)")
                deaths.append(Death(released: Double(report[3]) ?? .infinity, gain: Double(report[5]) ?? .infinity))
                try waitUntil("run \(run): the dead unit's release") { rig.unitReleased(owner) != nil }
                #expect(rig.holders().isEmpty, "run \(run)")
                #expect(rig.session.snapshot.mainGain == 0.8, "run \(run)")
                // And the movie heard back at the host's volume.
                let restored = try rig.mainLevel(after: 600)
                #expect(
                    abs(restored - RemoteRig.level(atGain: 0.8)) < 0.1,
                    "run \(run): the movie at \(restored) dB after the unit's death")
                #expect(
                    deaths[run].released <= RemoteTests.deathBound.inSeconds * 1000,
                    "run \(run): the death reported \(deaths[run].released) ms after the kill")
            }
            print(
                "[measure] remote unit death, outside: Python v\(version) unit SIGKILLed \(Self.kills) times, "
                    + "kill → unitReleased event read by death-watch.py \(Spread(deaths.map(\.released))); "
                    + "kill → main gain restore event \(Spread(deaths.map(\.gain)))")
        }
    }
}
