// The host the echo-cancellation churn tests spawn as a real process, so a crash is a test failure with
// the signal in it rather than the end of the test run. It plays a movie on the PipeWire engine with the
// voiceChat configuration (echo cancellation on), then follows commands read from stdin, one per line,
// answering each on stdout with one line ("ok ...", or "err ..."):
//
//   churn <n> [check every k]  n cycles of: a voice session and a duck taken, the voice recorded through
//                              the canceller (every k-th cycle its link to the canceller's source read
//                              with pw-link), both released
//                              -> ok churned <n> cancelling <n> linked <checked> frames <f> ms <t> holds <h>
//   connected                  waits until the engine is connected again (after a daemon restart)
//   serve <path>               serves the session to remote units at path (SessionServer) -> ok serving
//   recorded                   waits until the voice (a remote unit's) records through the canceller
//                              -> ok recorded <frames>
//   idle                       waits until no lease is held and the canceller is gone -> ok idle
//   quit                       closes the session, shuts the engine down -> ok quit, exit status 0
//
// With SHAREDSESSION_WIDEN_ECHO_RACE_US set, CEchoRaceWidener holds each canceller capture buffer that
// long on the data thread (the regression test of issue 23).
import CEchoRaceWidener
import Foundation
import SharedSession
import SharedSessionPipeWire
import SharedSessionRemote

@main
struct EchoChurn {
    static func main() {
        do {
            let engine = try PipeWireEngine(applicationName: "SharedSession echo churn")
            let session = SharedSession(
                engine: engine, policy: try SessionPolicy(voiceConfiguration: .voice))
            let movie = try session.openMainStream(source: SineSource(frequency: 440, amplitude: 0.3))
            var server: SessionServer?
            while let line = readLine() {
                let words = line.split(separator: " ").map(String.init)
                switch words.first {
                case "churn":
                    let cycles = Int(words.dropFirst().first ?? "") ?? 1
                    let every = Int(words.dropFirst(2).first ?? "") ?? 25
                    say(churn(session, engine, cycles: cycles, checkEvery: every))
                case "connected":
                    say(waitFor(.seconds(15)) { engine.isConnected } ? "ok connected" : "err not connected")
                case "serve":
                    server = try SessionServer(session: session, path: words.dropFirst().first ?? "")
                    say("ok serving")
                case "recorded":
                    _ = session.voiceInput.readAll()
                    var captured = 0
                    let recorded = waitFor(.seconds(5)) {
                        captured += session.voiceInput.readAll().count / 2
                        return engine.isEchoCancelling && captured > 0
                    }
                    say(recorded ? "ok recorded \(captured)" : "err not recorded through the canceller")
                case "idle":
                    let idle = waitFor(.seconds(5)) {
                        session.snapshot.leases.isEmpty && session.snapshot.ducks.isEmpty && !engine.isEchoCancelling
                    }
                    say(idle ? "ok idle" : "err still held: \(session.snapshot.leases.count) leases")
                case "quit":
                    server?.close()
                    movie.close()
                    session.close()
                    engine.shutdown()
                    say("ok quit")
                    exit(0)
                default:
                    say("err unknown command \(line)")
                }
            }
        } catch {
            say("err \(error)")
            exit(2)
        }
    }

    static func churn(_ session: SharedSession, _ engine: PipeWireEngine, cycles: Int, checkEvery: Int) -> String {
        let start = ContinuousClock.now
        var cancelling = 0
        var linked = 0
        var frames = 0
        for cycle in 0..<cycles {
            let voice: SessionLease
            do {
                voice = try session.acquire(.voice, owner: "voice-chat")
            } catch {
                return "err cycle \(cycle): voice refused: \(error)"
            }
            let duck = session.duck(owner: "voice-chat")
            _ = session.voiceInput.readAll()
            var captured = 0
            // Recorded through the canceller: it is loaded for this voice session and the capture
            // (whose node is made only once the canceller's source is there) hands audio over.
            let recorded = waitFor(.seconds(5)) {
                captured += session.voiceInput.readAll().count / 2
                return engine.isEchoCancelling && captured > 0
            }
            if recorded { cancelling += 1 }
            frames += captured
            if checkEvery > 0, cycle % checkEvery == 0 || cycle == cycles - 1 {
                if captureLinkedToCanceller() {
                    linked += 1
                } else {
                    duck.release()
                    voice.release()
                    return "err cycle \(cycle): the voice capture is not linked to the canceller's source"
                }
            }
            duck.release()
            voice.release()
            guard recorded else {
                return "err cycle \(cycle): not recorded through the canceller (captured \(captured) frames)"
            }
        }
        let elapsed = ContinuousClock.now - start
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        return "ok churned \(cycles) cancelling \(cancelling) linked \(linked) frames \(frames) ms \(milliseconds) "
            + "holds \(CEchoRaceWidener_holds())"
    }

    /// Whether `pw-link -l` shows a link from this process's canceller source to an input (the only input
    /// it feeds is the engine's voice capture).
    static func captureLinkedToCanceller() -> Bool {
        waitFor(.seconds(3)) {
            let lines = run("/usr/bin/pw-link", ["-l"]).split(separator: "\n")
            for (index, line) in lines.enumerated()
            where line.hasPrefix("sharedsession.\(getpid()).") && line.contains("echo-cancel.source:")
                && index + 1 < lines.count && lines[index + 1].contains("|->")
            {
                return true
            }
            return false
        }
    }

    static func run(_ path: String, _ arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Polls `condition` every 5 ms until it holds or `timeout` passes.
    static func waitFor(_ timeout: Duration, _ condition: () -> Bool) -> Bool {
        let end = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < end else { return false }
            usleep(5000)
        }
        return true
    }

    /// One line to stdout, unbuffered.
    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }
}
