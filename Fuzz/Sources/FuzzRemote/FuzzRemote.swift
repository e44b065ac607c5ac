// libFuzzer target: a line a remote unit sends its host, through `RemoteProtocol.decodeUnitLine`, the
// door every byte from a helper process passes before the host's session sees it, read as each version
// of the wire reads it. Every input must end in a message or a `SessionError` (`protocolViolation`); a
// trap, a hang (-timeout) or a leak is a finding.
import FuzzDriver
import SharedSession
import SharedSessionRemote

@main enum Fuzz {
    static func main() { runFuzzer(fuzzRemote) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRemote(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let line = UnsafeBufferPointer(start: data, count: size)
    for version in RemoteProtocol.supportedVersions {
        do {
            let message = try RemoteProtocol.decodeUnitLine(line, version: version, owner: "fuzz")
            // What the server does next with a decoded request: it writes it back in its reply's coding.
            _ = RemoteProtocol.encode(message, version: version)
        } catch {
            _ = error.message
        }
    }
    return 0
}
