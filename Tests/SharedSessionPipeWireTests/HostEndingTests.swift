import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    /// A host that adopted another player's node and ducked it, ending in every way a real host ends
    /// (issue 23), on the private daemon with WirePlumber's stock stream restore: the `adopting-host`
    /// helper adopts a `pw-play` or an mpv playing a 1 kHz tone at -6 dBFS (and plays a stream of its
    /// own, role Movie), ducks both, and ends. The user's volume is the player's channel volume as it
    /// started (WirePlumber gives it what was saved for its key: 1 on a fresh daemon, what another test's
    /// user set otherwise). Each run asserts, for the player:
    /// - its node's `softVolumes` equal its `channelVolumes` again, its channel volumes are the user's
    ///   and its `volume` 1, as before the host (read with `pw-dump`);
    /// - its tone is heard back at its level before the host (-6 dBFS at a user volume of 1) within
    ///   0.5 dB at the sink's monitor, within ``restoreLimit(quantum:)`` of the ending (the kill, the
    ///   exit command);
    /// - a player with the same application name and role, started afterwards with no host, starts at
    ///   the user's volume and is heard at that level;
    /// - WirePlumber's saved state (`restore-stream` on 0.4, `stream-properties` on 0.5) holds the
    ///   player's role's volume, and no volume for the player's key or the host's own Movie stream but 1
    ///   and the user's.
    @Suite("A host's end gives adopted players back")
    struct HostEndingTests {
        enum Ending: String, CaseIterable, CustomTestStringConvertible {
            case releaseThenExit = "releases the duck, then exits at once"
            case closeThenExit = "closes the adopted stream, then exits at once"
            case exitWhileDucked = "exits while ducked"
            case killWhileDucked = "is SIGKILLed while ducked"
            case killMidRamp = "is SIGKILLed in the middle of the restore ramp"
            case crashWhileDucked = "crashes (SIGSEGV) while ducked"
            case daemonRestartThenExit = "sees the daemon restart while ducked, re-adopts the player, then exits"
            var testDescription: String { rawValue }
        }

        enum Player: String, CaseIterable, CustomTestStringConvertible {
            case pwPlay = "pw-play"
            case mpv
            var testDescription: String { rawValue }
            var applicationName: String { self == .pwPlay ? "pw-play" : "mpv" }
        }

        /// From the ending to the player's tone heard back at its level: the watchdog's give-back (0.2 to
        /// 6 ms after the host's death, as it logs), the node's next cycle that applies it, and the cycle
        /// of the monitor capture that hears it: two quanta of the graph (pw-play asks for 100 ms of
        /// latency, so the graph runs at 4096 frames while it plays; mpv leaves it at 1024), plus the
        /// 5 ms window the level is read in and 5 ms for the give-back.
        static func restoreLimit(quantum: Int) -> Duration {
            .microseconds(Int64(2 * quantum) * 1_000_000 / 48_000) + .milliseconds(10)
        }

        /// Runs of each ending and player: 2, or SHAREDSESSION_ENDING_RUNS by hand (20 for the table in
        /// the AdoptingNodes article).
        static var runs: Int {
            getenv("SHAREDSESSION_ENDING_RUNS").flatMap { Int(String(cString: $0)) }.map { max($0, 1) } ?? 2
        }

        @Test(
            "the adopted player is given back at the user's volume, and nothing ducked is saved",
            arguments: Ending.allCases, Player.allCases)
        func ending(_ ending: Ending, _ player: Player) async throws {
            try Daemon.requirePrivate()
            for run in 1...Self.runs {
                let figure = try await Self.run(ending, player)
                print(
                    "[measure] host ending: \(ending.rawValue), \(player.rawValue), run \(run), quantum "
                        + "\(figure.quantum): restored "
                        + "\(figure.restore.map { String(format: "%.1f ms", $0.milliseconds) } ?? "never") after the ending"
                )
            }
        }

        struct Figure {
            let restore: Duration?
            let quantum: Int
        }

        static func run(_ ending: Ending, _ player: Player) async throws -> Figure {
            try Daemon.ensureRunning()
            let recorder = try SinkRecorder()
            defer { recorder.stop() }
            let tone = try toneFile(mainTone, amplitude: 0.5, seconds: 30)
            var players: [Daemon.Child] = []
            defer { for child in players { Self.end(child) } }
            players.append(try Self.start(player, tone))
            try await recorder.waitForTone(mainTone, atLeast: mainLevel - 40, timeout: .seconds(10))
            let user =
                try #require(Self.node(of: player.applicationName), "the player's node did not appear")
                .channel.max() ?? 1
            let userLevel = mainLevel + LevelMeter.decibels(Double(user))
            try await recorder.waitForTone(mainTone, atLeast: userLevel - 1, timeout: .seconds(10))

            let host = try UnitProcess(
                [player.applicationName, "--own-main"], executable: UnitProcess.sibling("adopting-host"))
            defer { host.kill() }
            let adopted = try host.line(timeout: .seconds(15))
            try #require(adopted.hasPrefix("adopted "), "adopting-host: \(adopted)")
            let watchdog = Int32(adopted.split(separator: " ").last ?? "") ?? -1
            try #require(watchdog > 0, "no adoption watchdog: \(adopted)")
            #expect(try host.ask("duck") == "ducked")
            // The monitor hears a cycle of the graph after it played: at pw-play's quantum of 4096, 85 ms.
            try await recorder.record(for: .milliseconds(400))
            let ducked = try recorder.mainLevelNow()
            // Adopted, the player plays at the session's gain: full, then ducked 20 dB.
            #expect(abs(ducked - (mainLevel - 20)) < 0.5, "the player was not ducked: \(ducked) dBFS")

            var endedAt: Int
            switch ending {
            case .releaseThenExit:
                endedAt = recorder.mark()
                host.send("release")
                host.send("exit")
            case .closeThenExit:
                endedAt = recorder.mark()
                host.send("close")
                host.send("exit")
            case .exitWhileDucked:
                endedAt = recorder.mark()
                host.send("exit")
            case .killWhileDucked:
                endedAt = recorder.mark()
                host.kill()
            case .killMidRamp:
                #expect(try host.ask("release") == "released")
                try await recorder.record(for: .milliseconds(100))
                endedAt = recorder.mark()
                host.kill()
            case .crashWhileDucked:
                // From the process's end: Swift's crash handler prints a backtrace first (40 to 50 ms after
                // the fault here), and the process is alive meanwhile.
                host.send("crash")
                let status = host.reap()
                endedAt = recorder.mark()
                print("[host-ending] \(ending.rawValue): the host ended with status \(status)")
            case .daemonRestartThenExit:
                let restart = Daemon.script("restart")
                try #require(restart.status == 0, "\(restart.output)")
                // The player's connection went with the daemon: a new one, re-adopted at the ducked gain.
                for child in players { Self.end(child) }
                players = [try Self.start(player, tone)]
                try await recorder.waitForTone(mainTone, atLeast: mainLevel - 21, timeout: .seconds(15))
                try await recorder.record(for: .milliseconds(1200))
                let again = try recorder.mainLevelNow()
                #expect(abs(again - (mainLevel - 20)) < 0.5, "not ducked again after the restart: \(again) dBFS")
                endedAt = recorder.mark()
                host.send("exit")
            }
            if !host.reaped {
                let status = host.reap()
                print("[host-ending] \(ending.rawValue): the host ended with status \(status)")
            }
            let quantum = recorder.engine.captureQuantum

            // Heard back: the first 5 ms window from the ending on with the tone within 0.5 dB of its level.
            try await recorder.record(for: .milliseconds(400))
            let samples = recorder.samples
            var restoredAt: Int?
            var frame = endedAt
            while frame + 240 <= samples.count / 2 {
                if try abs(meter.toneLevel(samples, frequency: mainTone, frames: window(frame, 240)) - userLevel) < 0.5
                {
                    restoredAt = frame
                    break
                }
                frame += 240
            }
            let restore = restoredAt.map { Duration.microseconds(Int64(($0 - endedAt) * 1_000_000 / 48_000)) }
            let level = try recorder.mainLevelNow()
            #expect(abs(level - userLevel) < 0.5, "the player stayed at \(level) dBFS (the user's: \(userLevel))")
            #expect(
                restore.map { $0 <= restoreLimit(quantum: quantum) } ?? false,
                "restored \(String(describing: restore)) after the ending at quantum \(quantum)")
            let node = try #require(Self.node(of: player.applicationName), "the player's node is gone")
            #expect(node.soft == node.channel, "soft volumes \(node.soft), channel volumes \(node.channel)")
            #expect(node.channel.allSatisfy { $0 == user } && node.volume == 1, "\(node); the user's \(user)")
            // The watchdog is gone too.
            try waitUntil("the watchdog's exit", timeout: .seconds(2)) { kill(watchdog, 0) != 0 }

            // The same player again, with no host: it starts at its own volume.
            for child in players { Self.end(child) }
            players = [try Self.start(player, tone)]
            try await recorder.waitForTone(mainTone, atLeast: mainLevel - 40, timeout: .seconds(10))
            try await recorder.record(for: .milliseconds(300))
            let fresh = try recorder.mainLevelNow()
            #expect(abs(fresh - userLevel) < 0.5, "a new \(player.rawValue) started at \(fresh) dBFS")
            let freshNode = try #require(Self.node(of: player.applicationName))
            #expect(freshNode.channel.allSatisfy { $0 == user } && freshNode.volume == 1, "\(freshNode)")

            // WirePlumber writes its state 1 s after the last change.
            try await Task.sleep(for: .milliseconds(1500))
            let saved = try Daemon.savedStreamVolumes()
            // The check below reads something: the player's role was saved (1 or the user's).
            let ownKey = "Output/Audio:media.role:Music:channelVolumes"
            #expect(saved[ownKey] != nil, "no \(ownKey) in \(Daemon.streamStatePath): \(saved)")
            for key in saved.keys
            where key.hasPrefix("Output/Audio:")
                && (key.contains("Music") || key.contains("Movie") || key.contains(player.applicationName))
            {
                #expect(saved[key] == 1 || saved[key] == user, "WirePlumber saved \(key) = \(saved[key] ?? -1)")
            }
            return Figure(restore: restore, quantum: quantum)
        }

        /// Starts `player` playing `file` (role Music, as the issue's desktop had it).
        static func start(_ player: Player, _ file: String) throws -> Daemon.Child {
            switch player {
            case .pwPlay:
                try Daemon.launch("pw-play", ["--media-role", "Music", file])
            case .mpv:
                try Daemon.launch(
                    "mpv", ["--no-config", "--no-video", "--no-terminal", "--ao=pipewire", "--loop-file=inf", file])
            }
        }

        static func end(_ child: Daemon.Child) {
            kill(child.pid, SIGKILL)
            child.waitUntilExit()
        }

        /// The Props of the playback node of `application`, from `pw-dump`.
        static func node(of application: String) -> (channel: [Float], soft: [Float], volume: Float)? {
            let output = Daemon.run("pw-dump", ["-N"]).output
            guard let objects = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]
            else { return nil }
            for object in objects {
                guard let info = object["info"] as? [String: Any], let props = info["props"] as? [String: Any],
                    props["application.name"] as? String == application,
                    props["media.class"] as? String == "Stream/Output/Audio",
                    let params = info["params"] as? [String: Any], let list = params["Props"] as? [[String: Any]],
                    let first = list.first
                else { continue }
                func floats(_ key: String) -> [Float] { (first[key] as? [Double] ?? []).map { Float($0) } }
                return (floats("channelVolumes"), floats("softVolumes"), Float(first["volume"] as? Double ?? -1))
            }
            return nil
        }
    }
}
