// The smallest host app and overlay SDK sharing one audio session: copy this file to start.
//
//   swift run minimal-host                    # PipeWire when a daemon answers, else the offline engine
//   swift run minimal-host --engine offline   # force one: offline or pipewire
//
// Exit status 0 when the movie came back after the SDK's duck, 1 when it did not, 2 for a bad argument.
import Foundation
import SharedSession
import SharedSessionPipeWire

/// An overlay SDK as its author writes it: it knows only the delegate its host hands it.
final class VoiceChatSDK {
    weak var host: (any OverlayAudioDelegate)?

    func joinCall() throws {
        try host?.prepareAudioSession(for: .voice)  // playAndRecord + voiceChat while held
        host?.requestAudioDucking()  // the movie drops 20 dB in 150 ms
    }

    func leaveCall() {
        host?.disableAudioDucking()  // back to the host's *current* volume in 400 ms
        host?.disableAudioSession(for: .voice)  // back to generic: the host's own lease still holds it
    }
}

@main
enum MinimalHost {
    static func main() {
        do { try run() } catch { fail("\(error)", status: 1) }
    }

    static func run() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.isEmpty || (arguments.count == 2 && arguments[0] == "--engine") else {
            fail("usage: minimal-host [--engine offline|pipewire]", status: 2)
        }
        let forced = arguments.last
        guard forced == nil || forced == "offline" || forced == "pipewire" else {
            fail("--engine takes offline or pipewire, not \(forced ?? "")", status: 2)
        }

        // At app start, once: the real engine, or the offline one when no sound server answers.
        let engine: any AudioEngine
        if forced == "offline" {
            engine = OfflineEngine()
        } else {
            do {
                engine = try PipeWireEngine(applicationName: "MinimalHost")
            } catch {
                if forced == "pipewire" { fail(error.message, status: 1) }
                print("\(error.message)\nusing the offline engine")
                engine = OfflineEngine()
            }
        }
        SharedSession.bootstrap(engine: engine, policy: .default)
        let session = SharedSession.shared
        let offline = engine as? OfflineEngine

        func show(_ step: String, level: Double?) -> Double? {
            let state = session.snapshot
            print(step)
            print(
                String(
                    format: "  volume %.2f × duck %.2f = main gain %.3f", state.mainVolume, state.duckFactor,
                    state.mainGain)
                    + (level.map { String(format: ", movie measured at %.2f dBFS", $0) } ?? ""))
            print("  configuration: \(state.activeConfiguration.map { "\($0)" } ?? "inactive")")
            print("  leases: \(state.owners); ducks: \(state.ducks.map(\.owner))")
            return level
        }

        print("engine: \(offline == nil ? "PipeWire (listen: the tone drops, then comes back)" : "offline")")
        _ = show("0. host: bootstrapped, nothing held yet", level: nil)

        // The host's movie: a 220 Hz tone at -9 dBFS stands in for a soundtrack.
        let hostLease = try session.acquire(.generic, owner: "player")
        let movie = try session.openMainStream(source: try SineSource(frequency: 220, amplitude: 0.5))
        session.mainVolume = 0.8

        // Plays `seconds`: rendered at once offline, where it returns the movie's level over the last
        // 100 ms in dBFS; in real time on PipeWire, where the sink plays it and there is nothing to read.
        func play(seconds: Double) throws -> Double? {
            guard let offline else {
                Thread.sleep(forTimeInterval: seconds)
                return nil
            }
            let stem = try offline.render(duration: .milliseconds(Int(seconds * 1000))).stems[movie.id] ?? []
            let tail = stem.suffix(offline.format.frames(in: .milliseconds(100)) * offline.format.channels)
            let power = tail.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(tail.count, 1))
            return 10 * log10(max(power, 1e-20))
        }
        let before = show("1. host: the movie plays", level: try play(seconds: 1))
        let configuration = session.snapshot.activeConfiguration

        // The host hands the SDK a bridge named after it, and keeps the bridge alive: the SDK's is weak.
        let bridge = OverlayAudioBridge(session: session, owner: "voice-chat")
        let sdk = VoiceChatSDK()
        sdk.host = bridge
        try sdk.joinCall()
        let under = show("2. sdk: joined a call (voice session, duck)", level: try play(seconds: 1))
        sdk.leaveCall()
        let after = show("3. sdk: left the call (duck and voice session undone)", level: try play(seconds: 1))
        withExtendedLifetime(bridge) {}

        let state = session.snapshot
        var restored =
            state.duckFactor == 1 && state.mainGain == state.mainVolume && state.ducks.isEmpty
            && state.voiceCount == 0 && state.activeConfiguration == configuration
        if let before, let under, let after {
            print(String(format: "movie: %.2f dBFS, %.2f under the duck, %.2f after", before, under, after))
            restored = restored && under < before - 10 && abs(after - before) <= 0.1
        }
        movie.close()
        hostLease.release()
        session.close()
        (engine as? PipeWireEngine)?.shutdown()
        guard restored else { fail("the movie did not come back to where it was before the call", status: 1) }
        print("restored: the movie is back at the host's volume")
    }

    static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data("minimal-host: \(message)\n".utf8))
        exit(status)
    }
}
