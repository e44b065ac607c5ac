import Foundation
import SharedSession
import SharedSessionRemote
import SharedSessionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension RemoteTests {
    /// Units killed with SIGKILL at random points, 200 runs against one host on the offline engine, each
    /// checked against the invariants: no duck outlives its holder's death by more than
    /// `RemoteTests.deathBound` (the figure itself is the `[measure]` line), the main stream comes back to the host's current volume within 0.1 dB, the host's own lease is
    /// untouched; and afterwards no connection, socket or lease left behind in the host.
    @Suite("Units killed at random points", .serialized)
    struct KillScheduleTests {
        enum Schedule: CaseIterable {
            /// Killed right after writing a duck request, before its reply: in half the runs at once (the
            /// request mostly has not reached the host: 49 of 50 runs measured so), in the other half as
            /// soon as the host took the duck (the unit never read its reply).
            case midRequest
            /// Killed while the main stream ramps down under its duck.
            case midRamp
            /// Killed while holding voice and a duck.
            case holdingVoice
            /// Two units, each ducking, killed at once.
            case twoAtOnce
        }

        @Test("200 kill runs: every duck given back as its unit dies, the movie back to the host's volume")
        func killSchedules() throws {
            let rig = try RemoteRig("kills")
            let hostLease = try rig.session.acquire(.generic, owner: "player")
            var random = SeededNoise(seed: 16)
            var latencies: [Duration] = []
            var fromKill: [Duration] = []
            var counts: [String: Int] = [:]
            // Mid-request kills whose duck the session had taken when the unit died (it never read the
            // reply), and those whose request had not reached it yet.
            var midRequestTaken = 0
            var midRequestNotReached = 0
            let fdsBefore = openDescriptors()
            let runs = 200
            for run in 0..<runs {
                let schedule = Schedule.allCases[run % Schedule.allCases.count]
                counts["\(schedule)", default: 0] += 1
                let volume = Float((0.3 + 0.7 * abs(Double(random.next()))).rounded(toPlaces: 3))
                rig.session.mainVolume = volume
                rig.forgetInputs()
                var units: [(owner: String, process: UnitProcess)] = []
                let owners = schedule == .twoAtOnce ? ["unit-a", "unit-b"] : ["unit-a"]
                for owner in owners {
                    let (process, welcome) = try rig.spawn(owner)
                    try #require(welcome.hasPrefix("ok welcome \(owner)"), "run \(run): \(welcome)")
                    units.append((owner, process))
                }
                switch schedule {
                case .midRequest:
                    _ = try units[0].process.ask("acquire generic")
                    units[0].process.send("duck")
                    if run % 8 == 4 {
                        try waitUntil("run \(run): the duck request to reach the host") {
                            rig.ducksGranted("unit-a") > 0
                        }
                    }
                case .midRamp:
                    _ = try units[0].process.ask("duck")
                    _ = try rig.scene.renderMain(milliseconds: 20 + Int(abs(random.next()) * 100))
                case .holdingVoice:
                    _ = try units[0].process.ask("acquire voice")
                    _ = try units[0].process.ask("duck 0.2")
                case .twoAtOnce:
                    for unit in units { _ = try unit.process.ask("duck") }
                }
                // The ducks each unit holds when it dies (a mid-request duck may not be granted yet: then
                // its connection's last release, which comes after it, stands for it).
                let held = rig.session.snapshot.ducks
                let killedAt = ContinuousClock.now
                for unit in units { _ = Glibc.kill(unit.process.pid, SIGKILL) }
                for unit in units { unit.process.reap() }
                for unit in units {
                    try waitUntil("run \(run): \(unit.owner)'s connection to be given back") {
                        rig.unitReleased(unit.owner) != nil
                    }
                    let reaped = try #require(unit.process.reapedAt)
                    let ducks = held.filter { $0.owner == unit.owner }.map(\.id)
                    let releases =
                        try ducks.isEmpty
                        ? [#require(rig.unitReleased(unit.owner))] : ducks.map { try #require(rig.duckReleased($0)) }
                    for released in releases {
                        latencies.append(released - reaped)
                        fromKill.append(released - killedAt)
                        // From the kill, the death itself: nothing is given back before it, and all of it
                        // soon after it.
                        #expect(released >= killedAt, "run \(run) (\(schedule)): released before the kill")
                        #expect(
                            released - killedAt <= RemoteTests.deathBound,
                            "run \(run) (\(schedule)): \(unit.owner)'s duck released \(released - killedAt) after the kill"
                        )
                    }
                }
                if schedule == .midRequest {
                    if rig.ducksGranted("unit-a") > 0 { midRequestTaken += 1 } else { midRequestNotReached += 1 }
                }
                let snapshot = rig.session.snapshot
                #expect(snapshot.ducks.isEmpty, "run \(run) (\(schedule)): \(snapshot.duckReport)")
                #expect(snapshot.leases.map(\.id) == [hostLease.id], "run \(run) (\(schedule)): the host's lease")
                #expect(snapshot.mainGain == volume, "run \(run) (\(schedule))")
                let level = try rig.mainLevel(after: 500)
                #expect(
                    abs(level - RemoteRig.level(atGain: volume)) < 0.1,
                    "run \(run) (\(schedule)): main at \(level) dB, volume \(volume) is \(RemoteRig.level(atGain: volume)) dB"
                )
            }
            // Nothing left behind in the host: no connection object, no accepted socket, no descriptor.
            try waitUntil("every connection object to go") { rig.server.liveConnections == 0 }
            #expect(rig.server.units.isEmpty)
            #expect(acceptedSockets(at: rig.server.path) == 1, "only the listening socket is left")
            // The process's descriptors did not grow. The count is the whole process's, and plain
            // `swift test` runs the other suites beside this one: their files and pipes closing while it
            // ran left it 2 lower in 2 of 20 such runs (84 of 86, 87 of 89), never higher. So it may
            // fall, not rise; a leak on any kill path rises by one a run, and the server's own sockets
            // are counted exactly above.
            let fdsAfter = openDescriptors()
            #expect(fdsAfter <= fdsBefore, "descriptors before \(fdsBefore), after \(fdsAfter)")
            #expect(hostLease.isHeld)

            // Both kinds of mid-request kill happened, each often enough to mean something.
            #expect(midRequestTaken >= 25, "\(midRequestTaken) mid-request kills with the duck taken")
            #expect(midRequestNotReached >= 10, "\(midRequestNotReached) mid-request kills before it reached the host")

            let sorted = latencies.sorted()
            let fromKillSorted = fromKill.sorted()
            print(
                "[measure] remote kill schedules: \(runs) runs (\(counts.sorted { $0.key < $1.key })), "
                    + "\(latencies.count) ducks (or connections) of killed units; reaped → duck released: median \(sorted[sorted.count / 2]), "
                    + "max \(sorted.last!); kill() → released: median \(fromKillSorted[fromKillSorted.count / 2]), "
                    + "max \(fromKillSorted.last!); fds before \(fdsBefore), after \(fdsAfter); mid-request kills: "
                    + "\(midRequestTaken) with the duck taken by the session, \(midRequestNotReached) before it reached it"
            )
        }

        /// This process's open file descriptors.
        func openDescriptors() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        }

        /// The sockets bound at `path` (the listener and every accepted connection), from /proc/net/unix.
        func acceptedSockets(at path: String) -> Int {
            // Read to the end: /proc files report a size of 0, which String(contentsOfFile:) trusts.
            let data = FileHandle(forReadingAtPath: "/proc/net/unix")?.readDataToEndOfFile() ?? Data()
            let table = String(decoding: data, as: UTF8.self)
            return table.split(separator: "\n").count { $0.hasSuffix(" " + path) }
        }
    }
}

extension Double {
    func rounded(toPlaces places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
