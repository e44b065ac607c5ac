import Foundation
import SharedSessionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonTests {
    /// Voice sessions with echo cancellation joined and left many times (issue 23): the host is the
    /// `echo-churn` helper, a process of its own, so a crash of the canceller's teardown is a failed test
    /// that names its signal.
    @Suite("Echo cancellation churn")
    struct EchoChurnTests {
        /// The helper host; its stderr (the engine's log, and libpipewire's) goes to the test's, or to
        /// `errorLog`.
        static func host(widenRaceMicroseconds: Int? = nil, errorLog: String? = nil) throws -> UnitProcess {
            try UnitProcess(
                [], executable: UnitProcess.sibling("echo-churn"),
                environment: widenRaceMicroseconds.map { ["SHAREDSESSION_WIDEN_ECHO_RACE_US": "\($0)"] } ?? [:],
                errorLog: errorLog)
        }

        /// Ends the helper with `quit` and returns how it ended: "exit 0", "exit N" or "signal N".
        static func end(_ host: UnitProcess) -> String {
            let answer = (try? host.ask("quit", timeout: .seconds(20))) ?? "no answer"
            let status = host.reap()
            let signal = status & 0x7f
            let ending = signal == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(signal)"
            return answer == "ok quit" ? ending : "\(ending) (quit answered \(answer))"
        }

        /// The cycles the churn runs: 300, or SHAREDSESSION_CHURN_CYCLES by hand (never fewer than 300 in CI).
        static var cycles: Int {
            let asked = getenv("SHAREDSESSION_CHURN_CYCLES").flatMap { Int(String(cString: $0)) } ?? 300
            return Requirements.all ? max(asked, 300) : max(asked, 3)
        }

        /// The daemon's nodes of process `pid` (named with the engine's prefix `sharedsession.<pid>.`), or its
        /// connections (clients whose `pipewire.sec.pid` is `pid`), by name, from `pw-cli ls` (pw-dump
        /// appends a second document when the graph changes while it prints).
        static func objects(_ type: String, of pid: Int32) -> [String] {
            let blocks = Daemon.run("pw-cli", ["ls", type]).output.components(separatedBy: "\tid ").dropFirst()
            return blocks.compactMap { block -> String? in
                var props: [String: String] = [:]
                for line in block.split(separator: "\n") {
                    let parts = line.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2 else { continue }
                    props[parts[0].trimmingCharacters(in: .whitespaces)] = parts[1]
                        .trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
                if type == "Client" {
                    return props["pipewire.sec.pid"] == "\(pid)" ? props["application.name"] ?? "?" : nil
                }
                return props["node.name"].flatMap { $0.hasPrefix("sharedsession.\(pid).") ? $0 : nil }
            }
        }

        @Test(
            "daemon: the canceller's teardown never races its capture callback (issue 23: a host whose canceller holds each captured buffer 10 ms churns 30 voice sessions and exits cleanly)",
            .privateDaemonOnly
        )
        func teardownDoesNotRaceTheCaptureCallback() async throws {
            try Daemon.requirePrivate()
            try Daemon.ensureRunning()
            // The helper's interposer sleeps 10 ms on the data thread after each buffer the canceller's
            // capture dequeues, before the callback queues it back: half of every 20 ms cycle. Unloading
            // the module on the loop thread NULLed the capture inside that window and the callback's
            // pw_stream_queue_buffer(NULL) faulted: 10 runs of 30 cycles out of 10 before the fix.
            // libpipewire 1.x prints "<call> called from wrong context" for a stream or proxy call made off
            // its context's loop without that loop's lock, which the data-thread teardown once made for
            // each of the canceller's streams.
            let errorLog = FileManager.default.temporaryDirectory.appendingPathComponent(
                "echo-churn-\(getpid()).err"
            ).path
            defer { unlink(errorLog) }
            let host = try Self.host(widenRaceMicroseconds: 10_000, errorLog: errorLog)
            let answer = (try? host.ask("churn 30 0", timeout: .seconds(120))) ?? "no answer (the host died)"
            let ending = Self.end(host)
            let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
            let wrongContext = log.split(separator: "\n").filter { $0.contains("called from wrong context") }
            #expect(
                wrongContext.isEmpty,
                "the teardown called PipeWire off its loop \(wrongContext.count) times: \(wrongContext.prefix(3))")
            #expect(ending == "exit 0", "the host ended with \(ending): signal 11 is the NULL-stream crash")
            #expect(answer.hasPrefix("ok churned 30 cancelling 30 "), "\(answer)")
            if answer.hasPrefix("ok") {
                let holds = answer.split(separator: " ").last.flatMap { Int($0) } ?? 0
                #expect(holds > 0, "the interposer held no canceller buffer: it widened nothing (\(answer))")
            }
        }

        @Test(
            "daemon: voice sessions with a duck joined and left 300 times with echo cancellation, through two daemon restarts: the host lives, each recorded through the canceller, nothing left behind",
            .privateDaemonOnly
        )
        func voiceSessionsChurn() async throws {
            try Daemon.requirePrivate()
            try Daemon.ensureRunning()
            let start = ContinuousClock.now
            let host = try Self.host()
            var ended = false
            defer { if !ended { _ = Self.end(host) } }
            // What the host has before any voice session: the movie's node and the engine's connection.
            try await Task.sleep(for: .milliseconds(500))
            let nodesBefore = Self.objects("Node", of: host.pid).sorted()
            let clientsBefore = Self.objects("Client", of: host.pid).count
            try #require(
                nodesBefore.count == 1 && clientsBefore >= 1, "the movie's node: \(nodesBefore), \(clientsBefore)")
            let total = Self.cycles
            let legs = [total / 3, total / 3, total - 2 * (total / 3)]
            var answers: [String] = []
            for (leg, cycles) in legs.enumerated() {
                if leg > 0 {
                    let restart = Daemon.script("restart")
                    try #require(restart.status == 0, "\(restart.output)")
                    #expect(try host.ask("connected", timeout: .seconds(20)) == "ok connected", "after restart \(leg)")
                }
                let answer = try host.ask("churn \(cycles) 25", timeout: .seconds(Double(cycles) * 6 + 30))
                answers.append(answer)
                try #require(answer.hasPrefix("ok churned \(cycles) cancelling \(cycles) "), "leg \(leg): \(answer)")
            }
            // Left behind: canceller nodes, voice captures, connections (each canceller had its own).
            let nodesAfter = Self.objects("Node", of: host.pid).sorted()
            let clientsAfter = Self.objects("Client", of: host.pid).count
            #expect(!nodesAfter.contains { $0.contains("echo-cancel") }, "canceller nodes left: \(nodesAfter)")
            #expect(nodesAfter == nodesBefore, "the host's nodes: before \(nodesBefore), after \(nodesAfter)")
            #expect(
                clientsAfter == clientsBefore, "the host's connections: \(clientsBefore) before, \(clientsAfter) after")
            let ending = Self.end(host)
            ended = true
            #expect(ending == "exit 0", "the host ended with \(ending)")
            print(
                "[measure] echo churn: \(total) voice sessions with a duck, echo-cancelled, 2 daemon restarts, "
                    + "in \(start.duration(to: .now)); legs: \(answers); the host's nodes \(nodesAfter), "
                    + "connections \(clientsAfter)")
        }

        @Test(
            "daemon: remote units take a voice session and a duck with echo cancellation and are killed, 300 times: the host lives, each recorded through the canceller, all released",
            .privateDaemonOnly
        )
        func remoteUnitsChurn() async throws {
            try Daemon.requirePrivate()
            try Daemon.ensureRunning()
            let start = ContinuousClock.now
            let host = try Self.host()
            var ended = false
            defer { if !ended { _ = Self.end(host) } }
            let path = socketPath("echo-churn")
            #expect(try host.ask("serve \(path)") == "ok serving")
            let total = Self.cycles
            for cycle in 0..<total {
                let unit = try UnitProcess(["--socket", path, "--owner", "voice-chat"])
                #expect(try unit.line().hasPrefix("ok welcome voice-chat"), "cycle \(cycle)")
                #expect(try unit.ask("acquire voice").hasSuffix(" voice"), "cycle \(cycle)")
                #expect(try unit.ask("duck").hasPrefix("ok lease"), "cycle \(cycle)")
                let recorded = try host.ask("recorded", timeout: .seconds(10))
                #expect(recorded.hasPrefix("ok recorded"), "cycle \(cycle): \(recorded)")
                unit.kill()
                let idle = try host.ask("idle", timeout: .seconds(10))
                try #require(idle == "ok idle", "cycle \(cycle): \(idle)")
            }
            #expect(!Self.objects("Node", of: host.pid).contains { $0.contains("echo-cancel") })
            let ending = Self.end(host)
            ended = true
            #expect(ending == "exit 0", "the host ended with \(ending)")
            print(
                "[measure] echo churn, remote: \(total) units with voice and a duck killed, in \(start.duration(to: .now))"
            )
        }
    }
}
