// libFuzzer target: a scene file's bytes through the watch-party's scene parser. Every input must end
// in a `Scene` or a `SceneError`; a trap, a hang (-timeout) or a leak (ASan's leak check) is a finding.
import FuzzDriver
import WatchPartyKit

@main enum Fuzz {
    static func main() { runFuzzer(fuzzScene) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScene(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    // `Scene.load` refuses a file that is not UTF-8 before the parser sees it: only valid text goes on.
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
    do {
        let scene = try Scene.parse(text, path: "/fuzz/scene.json")
        // Touch what a player reads first, so a scene that parses but holds nonsense is seen.
        _ = scene.cues.count
        _ = scene.duration
    } catch {
        _ = error.description
    }
    return 0
}
