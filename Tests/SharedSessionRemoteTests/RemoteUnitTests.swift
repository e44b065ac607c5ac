import Foundation
import SharedSession
import SharedSessionRemote
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension RemoteTests {
    /// A unit in a real helper process (`remote-unit`) against a host on the offline engine.
    @Suite("A unit in another process", .serialized)
    struct RemoteUnitTests {
        @Test("a unit process joins, takes voice, ducks the movie and leaves; everything comes back")
        func joinDuckVoiceLeave() throws {
            let rig = try RemoteRig("join")
            rig.session.mainVolume = 0.8
            let hostLease = try rig.session.acquire(.generic, owner: "player")
            let (unit, welcome) = try rig.spawn("watch-party")
            #expect(welcome == "ok welcome watch-party previous=none")

            let voice = try unit.ask("acquire voice")
            #expect(voice.hasPrefix("ok lease ") && voice.hasSuffix(" voice"))
            #expect(rig.session.snapshot.activeConfiguration == rig.session.policy.voiceConfiguration)
            #expect(try unit.ask("duck").hasPrefix("ok lease "))
            #expect(rig.session.snapshot.ducks.map(\.owner) == ["watch-party"])
            // The movie under the remote unit's duck: the host's volume × −20 dB, in the rendered audio.
            #expect(abs(try rig.mainLevel(after: 400) - RemoteRig.level(atGain: 0.08)) < 0.1)
            #expect(try unit.ask("snapshot") == "ok snapshot gain 0.08 ducks 1 leases 2")

            #expect(try unit.ask("leave") == "ok left")
            unit.reap()
            try waitUntil("the unit's leases to go") { rig.holders() == ["player"] }
            #expect(abs(try rig.mainLevel(after: 600) - RemoteRig.level(atGain: 0.8)) < 0.1)
            #expect(rig.releaseReasons("watch-party") == ["it left"])
            #expect(rig.session.snapshot.leases.map(\.id) == [hostLease.id])
        }

        @Test("the OverlayAudioDelegate calls of a unit process act on the host as in-process")
        func delegateCalls() throws {
            let rig = try RemoteRig("delegate")
            let (unit, _) = try rig.spawn("social-feed")
            #expect(try unit.ask("prepare generic") == "ok")
            #expect(try unit.ask("request-duck") == "ok")
            #expect(rig.session.snapshot.mainGain == 0.1)
            #expect(try unit.ask("disable-duck") == "ok")
            #expect(try unit.ask("disable-duck") == "ok")  // unbalanced: ignored on the host
            #expect(rig.session.snapshot.mainGain == 1)
            #expect(try unit.ask("disable generic") == "ok")
            #expect(rig.session.snapshot.isActive == false)
            try waitUntil("the ignored release") {
                rig.ignoredReleases("social-feed") == 1
            }
        }

        @Test("a unit process receives the session's events")
        func events() throws {
            let rig = try RemoteRig("events")
            let (unit, _) = try rig.spawn("notifications")
            // The unit's stream starts at its welcome: what the host does now reaches it in order.
            rig.session.mainVolume = 0.5
            unit.send("events 2")
            #expect(try unit.line() == "event mainVolumeChanged")
            #expect(try unit.line() == "event mainGainChanged")
            #expect(try unit.line() == "ok events")
        }

        @Test("a killed unit's duck and voice are given back as it dies; reconnecting starts from nothing")
        func killAndReconnect() throws {
            let rig = try RemoteRig("kill")
            rig.session.mainVolume = 0.9
            let (unit, _) = try rig.spawn("watch-party")
            _ = try unit.ask("acquire voice")
            _ = try unit.ask("duck")
            unit.kill()
            let reaped = try #require(unit.reapedAt)
            try waitUntil("the killed unit's leases to go") { rig.unitReleased("watch-party") != nil }
            let released = try #require(rig.unitReleased("watch-party"))
            print("[measure] remote kill and reconnect: reaped → unitReleased \(released - reaped)")
            #expect(
                released - reaped < RemoteTests.deathBound,
                "released \(released - reaped) after the kernel reaped the unit")
            #expect(rig.holders().isEmpty)
            #expect(rig.session.snapshot.mainGain == 0.9)
            #expect(rig.releaseReasons("watch-party") == ["its connection closed"])
            // The duck first (the movie's restore starts before any configuration change), then the voice
            // session, then the session hears that the unit went.
            #expect(rig.releaseOrder() == ["releaseDuck", "releaseLease", "unitReleased"])
            #expect(abs(try rig.mainLevel(after: 600) - RemoteRig.level(atGain: 0.9)) < 0.1)

            let (again, welcome) = try rig.spawn("watch-party")
            #expect(
                welcome
                    == "ok welcome watch-party previous=1 session(s) and 1 duck(s) given back: its connection closed")
            #expect(try again.ask("snapshot") == "ok snapshot gain 0.9 ducks 0 leases 0")
        }

        @Test("a second connection under a connected owner's name is refused; the first keeps its duck")
        func ownerNameTaken() throws {
            let rig = try RemoteRig("taken")
            let (first, _) = try rig.spawn("watch-party")
            _ = try first.ask("duck")
            let (_, refused) = try rig.spawn("watch-party")
            #expect(refused.hasPrefix("err accessRefused: owner \"watch-party\" is connected already"))
            #expect(rig.session.snapshot.ducks.map(\.owner) == ["watch-party"])
        }

        @Test("the host's policy decides the owner name: a reserved or unlisted name is refused")
        func ownerPolicy() throws {
            // "player" is listed and reserved: only the reservation can refuse it.
            let rig = try RemoteRig(
                "policy", access: .sameUser(owners: ["watch-party", "player"], reserved: ["player"]))
            let (_, reserved) = try rig.spawn("player")
            #expect(reserved == "err accessRefused: owner \"player\" is the host's own: a unit takes a name of its own")
            let (_, unlisted) = try rig.spawn("someone")
            #expect(unlisted.hasPrefix("err accessRefused: owner \"someone\" is not one the host accepts"))
            let (_, bad) = try rig.spawn("../etc")
            #expect(bad.hasPrefix("err accessRefused: owner \"../etc\" is not a plain name"))
            #expect(rig.holders().isEmpty)
            // The listed name that is not reserved is let in, and holds what it takes under that name.
            let (unit, welcome) = try rig.spawn("watch-party")
            #expect(welcome == "ok welcome watch-party previous=none")
            #expect(try unit.ask("duck").hasPrefix("ok lease "))
            #expect(rig.holders() == ["watch-party"])
        }

        @Test("a unit holds at most 64 leases: the 65th is limitExceeded, nothing held changes, a release makes room")
        func leaseLimit() throws {
            let rig = try RemoteRig("lease-limit")
            let (unit, _) = try rig.spawn("hoarder")
            var ids: [String] = []
            for index in 0..<64 {
                let reply = try unit.ask(index % 2 == 0 ? "duck" : "acquire generic")
                try #require(reply.hasPrefix("ok lease "), "lease \(index + 1): \(reply)")
                ids.append(String(reply.split(separator: " ")[2]))
            }
            let refused = try unit.ask("duck")
            #expect(refused.hasPrefix("err limitExceeded"), "\(refused)")
            #expect(refused.contains("64"), "the refusal names the limit: \(refused)")
            #expect(rig.holders() == ["hoarder"])
            #expect(rig.session.snapshot.ducks.count == 32)
            #expect(rig.session.snapshot.leases.count == 32)
            #expect(try unit.ask("release \(ids[0])") == "ok released \(ids[0])")
            #expect(try unit.ask("duck").hasPrefix("ok lease "))
            #expect(try unit.ask("acquire generic").hasPrefix("err limitExceeded"))
        }

        @Test("the server's default limits are the documented ones (the mechanisms are tested at small values)")
        func defaultLimits() {
            // Pinned as literals: AbuseTests exercises the event buffer (16 KiB) and the stall limit
            // (300 ms) at small values, leaseLimit the lease limit as shipped.
            let limits = SessionServer.Limits()
            #expect(limits.leasesPerUnit == 64)
            #expect(limits.units == 4096)
            #expect(limits.eventBufferBytes == 262_144)
            #expect(limits.stalledReadLimit == .seconds(5))
            #expect(limits.violationsPerUnit == 16)
        }

        @Test("the host's per-unit limits apply to a remote unit")
        func unitLimits() throws {
            let policy = try SessionPolicy(
                unitLimits: ["feed": try UnitLimits(deepestDuckLevel: 0.5, mayTakeVoice: false)])
            let rig = try RemoteRig("limits", policy: policy)
            let (unit, _) = try rig.spawn("feed")
            #expect(try unit.ask("duck 0.01").hasPrefix("ok lease "))
            #expect(rig.session.snapshot.mainGain == 0.5)
            #expect(try unit.ask("acquire voice").hasSuffix(" generic"))
        }

        @Test(
            "the socket is mode 0600, and a unit of another user is refused",
            .enabled("runs as root, to start the unit as nobody (in CI it runs, and fails when not root)") {
                getuid() == 0 || Requirements.all
            })
        func otherUserRefused() throws {
            try #require(getuid() == 0, "runs as root, to start the unit as nobody")
            let rig = try RemoteRig("nobody")
            var status = stat()
            #expect(stat(rig.server.path, &status) == 0)
            #expect(status.st_mode & 0o777 == 0o600)
            let asNobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            // With the socket as made, the kernel stops nobody at connect().
            let (_, denied) = try rig.spawn("intruder", prefix: asNobody)
            #expect(denied.hasPrefix("err connectionLost: cannot connect"))
            #expect(denied.contains("Permission denied") || denied.contains("EACCES"), "not EACCES: \(denied)")
            // Opened up by mistake, the server's own check (SO_PEERCRED) still refuses the other uid.
            chmod(rig.server.path, 0o666)
            let (_, refused) = try rig.spawn("intruder", prefix: asNobody)
            #expect(refused.hasPrefix("err accessRefused: uid 65534"))
            #expect(rig.holders().isEmpty)
            #expect(rig.server.units.isEmpty)
        }

        @Test("OverlayAudioConformance passes against the remote client")
        func conformance() throws {
            var index = 0
            try OverlayAudioConformance.verify {
                index += 1
                let rig = try RemoteRig("conformance-\(index)")
                let remote = try RemoteSession(path: rig.server.path, owner: "conformance")
                let session = rig.session
                return OverlayAudioConformance.Subject(
                    delegate: remote.makeDelegate(), duckLevel: 0.1,
                    observe: {
                        _ = rig
                        let snapshot = session.snapshot
                        let type: AudioSessionType? = snapshot.activeConfiguration.map {
                            $0 == session.policy.voiceConfiguration ? .voice : .generic
                        }
                        return .init(isActive: snapshot.isActive, activeType: type, mainVolume: snapshot.mainGain)
                    },
                    observeEngine: {
                        // What a listener hears: render past the longest fade (the 400 ms restore), then
                        // the gain the render side reached, and whether the constant main went silent.
                        let scene = rig.scene
                        let stem = (try? scene.engine.render(duration: .milliseconds(450)).stem(scene.main)) ?? []
                        let gain = scene.engine.currentGain(of: scene.main.id) ?? 0
                        let silent = stem.suffix(960).allSatisfy { $0 == 0 }
                        return .init(
                            isActive: scene.engine.activeConfiguration != nil, mainGain: gain,
                            mainPaused: stem.isEmpty || (silent && gain > 0))
                    },
                    setHostVolume: { session.mainVolume = $0 })
            }
        }
    }
}
