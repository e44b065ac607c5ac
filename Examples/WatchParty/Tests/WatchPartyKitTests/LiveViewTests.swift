import Foundation
import Logging
import Synchronization
import Testing

@testable import WatchPartyKit

/// What the live view writes while the default scene plays: plain lines off a terminal, a panel
/// redrawn in place on one.
@Suite struct LiveViewTests {
    final class Output: Sendable {
        let text = Mutex("")
        func append(_ line: String) { text.withLock { $0 += line } }
    }

    func play(style: LiveView.Style) throws -> String {
        let output = Output()
        let view = LiveView(style: style) { output.append($0) }
        let scene = try Scene.load(path: SceneReaderTests.defaultScene)
        _ = try SceneRunner(scene: scene, engine: .offline, view: view, logger: Logger(label: "test")).run()
        return output.text.withLock { $0 }
    }

    @Test func offATerminalEveryCueAndEventIsAPlainLine() throws {
        let text = try play(style: .lines)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(!text.contains("\u{1B}["))
        #expect(lines.contains("[  2.005 s] feed clip + duck   (scene line 11)"))
        #expect(
            lines.contains { $0.hasPrefix("   2.005  duck requested") && $0.hasSuffix("← social-feed duck lease#3") })
        #expect(lines.contains { $0.hasPrefix("[ 12.011 s] interruption") })
        #expect(lines.filter { $0.contains("progress:") }.count == 3)
        #expect(lines.contains { $0.contains("movie: seeked to 1.0 seconds") })
        #expect(lines.contains { $0.contains("movie: media/movie.mp4 (aac in mov,mp4") && $0.contains("32768 frames") })
    }

    @Test func onATerminalThePanelIsRedrawnInPlace() throws {
        let text = try play(style: .terminal)
        // Each redraw moves the cursor up over the previous panel and clears each line it rewrites.
        let redraws = text.components(separatedBy: "\u{1B}[").filter { $0.first?.isNumber == true && $0.contains("A") }
        #expect(redraws.count >= 1)
        let plain = text.replacingOccurrences(of: "\u{1B}\\[[0-9;]*[A-Za-z]", with: "", options: .regularExpression)
            .replacingOccurrences(of: "\r", with: "")
        let last = plain.components(separatedBy: "watch-party \"Movie night with friends\"").last ?? ""
        // The last panel: the scene ended, the state after it, the meters and the latest events.
        #expect(last.contains("20.00 s of 20.0 s"))
        for label in [
            "movie ", "voice ", "mix ", "session ", "leases ", "ducks ", "main ", "interruption ", "lifecycle ",
        ] {
            #expect(last.contains("\n" + label), "no \(label)line in the last panel")
        }
        #expect(last.contains("leases       host-player: generic"))
        #expect(last.contains("movie clock  "))
        #expect(last.contains("▶ mark: paused"))
    }

    @Test func aLineLongerThanTheTerminalIsCutKeepingItsEscapes() {
        let line = "\u{1B}[1mbold\u{1B}[0m and a long tail"
        #expect(LiveView.clip(line, to: 6) == "\u{1B}[1mbold\u{1B}[0m a\u{1B}[0m")
    }
}
