// libFuzzer target: a session recording's bytes through `SessionRecording(parsing:)`. Every input must
// end in a recording or a `SessionError`; a trap, a hang (-timeout) or a leak is a finding.
import FuzzDriver
import SharedSession
import SharedSessionRecording

@main enum Fuzz {
    static func main() { runFuzzer(fuzzRecording) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecording(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    // `SessionRecording(contentsOf:)` refuses a file that is not UTF-8 before parsing: only text goes on.
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
    do {
        let recording = try SessionRecording(parsing: text)
        // What a replay reads first: the inputs in order, the events, the policy.
        _ = recording.inputs.count
        _ = recording.events.count
        _ = "\(recording.policy)"
    } catch {
        _ = error.message
    }
    return 0
}
