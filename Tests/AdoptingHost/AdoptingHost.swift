// A host app as the README and the AdoptingNodes article build one, run as a real process by the
// host-ending tests: it adopts another player's node as its main stream (by application name), plays a
// main stream of its own beside it when asked, ducks both, and ends the way the test tells it to.
//
//   adopting-host APPLICATION-NAME [--own-main] [--manager] [--loopback | --soft-volumes]
//
// --manager makes the engine with `access: .manager` (a sandboxed host's way to adopt); --loopback and
// --soft-volumes choose its `adoptionCarrier` (`.automatic` without either). Every adoption
// event but `adopted` is printed on stderr as "event: …"; an error ends it with status 1 and the error
// on stderr.
//
// Reads commands on stdin, one a line or several on a line separated by ';' (run right after one
// another, with nothing between them), and answers on stdout:
//   duck            takes a duck; "ducked" once its fade is over
//   release         releases it; "released" at once (the restore ramp is running)
//   close           closes the adopted stream (and the host's own); "closed"
//   release-host    releases the host's own lease (a generic one, as Examples/MinimalHost holds)
//   close-session   closes the session
//   drop-adoption   drops the NodeAdoption (it closes the streams it opened)
//   shutdown        the engine's shutdown
//   drop-all        drops every reference to the engine, the session and the streams: the engine's
//                   deinit runs; "engine deinit yes" (or "no" if something still holds it)
//   wait MS         sleeps MS milliseconds
//   exit            exit(0) at once: no shutdown, no stream closed
//   shutdown-exit   the engine's shutdown, then exit(0)
//   crash           a segmentation fault (a write through a bad pointer)
// Before the first command it prints "adopted NODE WATCHDOG-PID" once the player's node is adopted.
import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire

@main
enum AdoptingHost {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let application = arguments.first else {
            FileHandle.standardError.write(
                Data(
                    "usage: adopting-host APPLICATION-NAME [--own-main] [--manager] [--loopback | --soft-volumes]\n"
                        .utf8))
            exit(2)
        }
        do {
            try run(
                adopting: application, ownMain: arguments.contains("--own-main"),
                access: arguments.contains("--manager") ? .manager : .standard,
                carrier: arguments.contains("--loopback")
                    ? .loopback : arguments.contains("--soft-volumes") ? .softVolumes : .automatic)
        } catch {
            FileHandle.standardError.write(Data("adopting-host: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(adopting application: String, ownMain: Bool, access: PipeWireAccess, carrier: AdoptionCarrier)
        throws
    {
        var engine: PipeWireEngine? = try PipeWireEngine(
            applicationName: "adopting-host", access: access, adoptionCarrier: carrier)
        var session: SharedSession? = SharedSession(engine: engine!, policy: .default)
        var adoption: NodeAdoption? = try NodeAdoption(session: session!, engine: engine!)
        let adopted = Locked<UInt32?>(nil)
        adoption?.setEventHandler { event in
            if case .adopted(_, let node, _, _) = event {
                adopted.withLock { $0 = node }
            } else {
                FileHandle.standardError.write(Data("event: \(event)\n".utf8))
            }
        }
        var main: StreamHandle? = try adoption?.adoptMain(AdoptionRule(.applicationName(application)))
        var hostLease: SessionLease? = try session?.acquire(.generic, owner: "player")
        // A stream of its own beside it (role Movie, as a host playing some of its audio itself has), to
        // check that nothing of ours is saved by WirePlumber either.
        var own: StreamHandle?
        if ownMain {
            own = try session?.openStream(
                StreamDescriptor(name: "host tone", role: .movie),
                source: try SineSource(frequency: 660, amplitude: 0.1), owner: "host")
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while adopted.withLock({ $0 }) == nil, ContinuousClock.now < deadline { usleep(1000) }
        guard let node = adopted.withLock({ $0 }) else {
            throw SessionError(code: .engineUnavailable, message: "no node of \(application) was adopted within 10 s")
        }
        say("adopted \(node) \(engine?.adoptionWatchdogProcessID ?? -1)")
        var lease: DuckLease?
        while let line = readLine() {
            for command in line.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                switch command {
                case "duck":
                    lease = try session?.duck(DuckRequest(owner: "feed"))
                    usleep(UInt32((session?.policy.fadeDown.milliseconds ?? 0) + 100) * 1000)
                    say("ducked")
                case "release":
                    lease?.release()
                    lease = nil
                    say("released")
                case "close":
                    main?.close()
                    own?.close()
                    say("closed")
                case "release-host":
                    hostLease?.release()
                    hostLease = nil
                case "close-session":
                    session?.close()
                case "drop-adoption":
                    adoption = nil
                case "shutdown":
                    engine?.shutdown()
                case "drop-all":
                    weak let gone = engine
                    lease = nil
                    hostLease = nil
                    main = nil
                    own = nil
                    adoption = nil
                    session = nil
                    engine = nil
                    say("engine deinit \(gone == nil ? "yes" : "no")")
                case let wait where wait.hasPrefix("wait "):
                    usleep(UInt32(wait.dropFirst(5)).map { $0 * 1000 } ?? 0)
                case "exit":
                    exit(0)
                case "shutdown-exit":
                    engine?.shutdown()
                    exit(0)
                case "crash":
                    // A write through a bad pointer, as a real crash is (a raised SIGSEGV is not a fault,
                    // and Swift's crash handler lets it return).
                    UnsafeMutablePointer<Int32>(bitPattern: Int(getpid() & 0) + 16)!.pointee = 0
                default:
                    say("unknown command \(command)")
                }
            }
        }
        withExtendedLifetime((adoption, main, hostLease, own, lease)) {}
    }
}

/// One answer line, flushed at once (stdout is a pipe: fully buffered otherwise).
func say(_ line: String) {
    print(line)
    fflush(nil)
}

extension Duration {
    fileprivate var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
