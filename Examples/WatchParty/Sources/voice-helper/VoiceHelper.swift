// The watch-party's voice-chat SDK in a helper process of its own: it joins the host's session over
// the socket the host serves (`--socket PATH`), holds a voice session and a duck through the same
// OverlayAudioDelegate calls it makes in-process, prints "joined", and on a "leave" line undoes them
// and leaves. Killed instead, it leaves nothing behind: the host gives back what it held.
import SharedSession
import SharedSessionRemote

#if canImport(Glibc)
    import Glibc
#endif

/// The SDK: it only knows its host as an `OverlayAudioDelegate`.
final class VoiceChat {
    weak var host: (any OverlayAudioDelegate)?

    func joinCall() throws {
        try host?.prepareAudioSession(for: .voice)
        host?.requestAudioDucking()
    }

    func leaveCall() {
        host?.disableAudioDucking()
        host?.disableAudioSession(for: .voice)
    }
}

func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard let index = arguments.firstIndex(of: "--socket"), index + 1 < arguments.count else {
    say("error: usage: watch-party-voice-helper --socket PATH")
    exit(2)
}
do {
    let remote = try RemoteSession(path: arguments[index + 1], owner: "watch-party")
    let host = remote.makeDelegate()
    let chat = VoiceChat()
    chat.host = host
    try chat.joinCall()
    say("joined")
    while let line = readLine() {
        guard line == "leave" else { continue }
        chat.leaveCall()
        remote.leave()
        say("left")
        exit(0)
    }
} catch {
    say("error: \(error)")
    exit(1)
}
