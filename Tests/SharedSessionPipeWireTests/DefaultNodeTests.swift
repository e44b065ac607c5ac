import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

extension DaemonTests {
    /// The nodes the engine's modules make never become a default of the desktop's, whatever its own
    /// sink declares: the lab restarted with its null sink at no `priority.session` (a headless box's, a
    /// remote desktop's or a streaming host's virtual sink) and at 0, the priority the loopback's sink
    /// had when WirePlumber 0.4 (which ranks a node without one at -1) made it the default sink (and
    /// the default source where no microphone outranked its monitor), so that a recorder of the
    /// default sink heard the player at full level under a duck.
    @Suite("Default nodes")
    struct DefaultNodeTests {
        @Test(
            "through a loopback, on a daemon whose only sink declares no priority or 0, the loopback never becomes the default sink or source, and the default sink's monitor hears the duck",
            arguments: ["none", "0"])
        func loopbackNeverDefault(_ sinkPriority: String) async throws {
            try Daemon.requirePrivate()
            let lanes = ProcessInfo.processInfo.environment["SHAREDSESSION_PW_SINK_PRIORITY"]
            setenv("SHAREDSESSION_PW_SINK_PRIORITY", sinkPriority, 1)
            defer {
                if let lanes {
                    setenv("SHAREDSESSION_PW_SINK_PRIORITY", lanes, 1)
                } else {
                    unsetenv("SHAREDSESSION_PW_SINK_PRIORITY")
                }
                // The lane's own lab again, for the tests after this one.
                let restart = Daemon.script("start")
                if restart.status != 0 { Issue.record("the lab did not start again: \(restart.output)") }
            }
            // A box where nobody ever chose a default: WirePlumber remembers every sink chosen before
            // (0.4 as `default.configured.audio.sink.N`) and ranks one that is present above any
            // priority, so the defaults earlier tests chose would hide the loopback's rank.
            #expect(Daemon.script("stop").status == 0, "the lab did not stop")
            try? FileManager.default.removeItem(atPath: Self.chosenDefaultsPath)
            try Daemon.ensureRunning()
            #expect(Self.chosenDefaults().isEmpty, "the session manager remembers chosen defaults")
            #expect(Self.defaults() == Self.lab, "the lab's defaults before the host")

            let rig = try AdoptionRig(carrier: .loopback)
            defer { rig.stop() }
            let main = try rig.adoption.adoptMain(AdoptionRule(.applicationName("pw-play")))
            defer { main.close() }
            _ = try rig.startPwPlay(try toneFile(mainTone, amplitude: 0.5, seconds: 30))
            try await rig.wait("pw-play adopted", timeout: .seconds(10)) {
                if case .adopted = $0 { true } else { false }
            }
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1, timeout: .seconds(10))
            let duck = rig.session.duck(owner: "feed")
            let (ducked, duckedWindows) = try await Self.heldLevel(near: mainLevel - 20, rig.recorder)
            let loopbacks = HostEndingTests.loopbackNodes()
            let during = Self.defaults()
            duck.release()
            let (back, backWindows) = try await Self.heldLevel(near: mainLevel, rig.recorder)
            print(
                "[default-nodes] sink priority \(sinkPriority): loopback \(loopbacks), defaults \(during); "
                    + "ducked \(ducked), back \(back) dBFS")
            #expect(!loopbacks.isEmpty, "the player is not ducked through a loopback")
            #expect(during == Self.lab, "a default moved while the loopback ducked the player")
            #expect(
                abs(ducked - (mainLevel - 20)) < 0.5,
                "the default sink's monitor heard \(ducked) dBFS under the duck; by 100 ms: \(duckedWindows)")
            #expect(
                abs(back - mainLevel) < 0.5,
                "the default sink's monitor heard \(back) dBFS after the duck; by 100 ms: \(backWindows)")
        }

        /// The main tone's held level (the median of the last three 100 ms) once it is within 0.5 dB of
        /// `target`, else as it is 3 s on: five times the ramps' quiet figure (the duck's 150 ms or the
        /// release's 400 ms, a 4096-frame quantum and the monitor's cycle), which a loaded machine's
        /// late ramp steps stretched past 900 ms in a CI run.
        static func heldLevel(near target: Double, _ recorder: SinkRecorder) async throws -> (Double, [Double]) {
            let end = ContinuousClock.now + .seconds(3)
            try await recorder.record(for: .milliseconds(300))
            var reading = try recorder.steadyMainLevelNow()
            while abs(reading.level - target) >= 0.5, ContinuousClock.now < end {
                try await recorder.record(for: .milliseconds(100))
                reading = try recorder.steadyMainLevelNow()
            }
            return reading
        }

        /// The file the private daemon's WirePlumber keeps the defaults users chose in.
        static var chosenDefaultsPath: String {
            (ProcessInfo.processInfo.environment["SHAREDSESSION_PW_DIR"] ?? "/tmp/sharedsession-pw")
                + "/state/wireplumber/default-nodes"
        }

        /// The chosen defaults WirePlumber remembers (its `default.configured.*` lines), none if the
        /// file is not there.
        static func chosenDefaults() -> [Substring] {
            let text = (try? String(contentsOfFile: chosenDefaultsPath, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { $0.hasPrefix("default.configured") }
        }

        /// The lab's defaults: its null sink, and its voice loopback's source.
        static let lab = Defaults(sink: "sharedsession-sink", source: "sharedsession-voice")

        struct Defaults: Equatable, CustomStringConvertible {
            let sink: String?
            let source: String?
            var description: String { "sink \(sink ?? "none"), source \(source ?? "none")" }
        }

        /// The session manager's `default.audio.sink` and `default.audio.source`, from `pw-metadata`.
        static func defaults() -> Defaults {
            let output = Daemon.run("pw-metadata", ["-n", "default", "0"]).output
            func name(_ key: String) -> String? {
                guard let line = output.split(separator: "\n").first(where: { $0.contains("key:'\(key)'") }),
                    let range = line.range(of: #""name":"[^"]*""#, options: .regularExpression)
                else { return nil }
                return String(line[range].dropFirst(8).dropLast())
            }
            return Defaults(sink: name("default.audio.sink"), source: name("default.audio.source"))
        }
    }
}
