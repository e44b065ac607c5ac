import Foundation
import SharedSession
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a person watches while a scene plays.
///
/// On a terminal: a panel redrawn in place (ANSI escapes) with the scene's progress, a meter per stream,
/// the session's state from `session.snapshot` (configuration, leases by owner, ducks, interruption,
/// lifecycle) and the latest events. When standard output is not a terminal: plain lines, one per cue,
/// event and note, and a progress line at each quarter, so a log file reads top to bottom.
public final class LiveView: Sendable {
    /// How the view writes.
    public enum Style: Sendable {
        /// The redrawn panel.
        case terminal
        /// Plain lines.
        case lines
        /// Nothing but what ``say(_:)`` is told after the run.
        case quiet
    }

    private struct State {
        var scene: Scene?
        var engine = ""
        var measuresStems = true
        var time: Double = 0
        var progress: Double = 0
        var levels: [String: Double?] = [:]
        var clock: MovieClock?
        var names: [String] = []
        var snapshot: SessionSnapshot?
        var log: [String] = []
        var drawnLines = 0
        var lastDraw: ContinuousClock.Instant?
        var quarter = 0
        var started: ContinuousClock.Instant?
        var isLive = false
    }

    private let style: Style
    private let output: @Sendable (String) -> Void
    private let state = Mutex(State())
    private static let logLines = 12
    private static let meterWidth = 36

    /// A view in `style`; by default the panel when standard output is a terminal, plain lines otherwise.
    public init(style: Style? = nil) {
        self.style = style ?? (isatty(STDOUT_FILENO) == 1 ? .terminal : .lines)
        self.output = { FileHandle.standardOutput.write(Data($0.utf8)) }
    }

    /// A view in `style` that hands what it writes to `output` (for tests).
    init(style: Style, output: @escaping @Sendable (String) -> Void) {
        self.style = style
        self.output = output
    }

    /// Prints a line outside the panel (before the scene starts or after it ended). Quiet prints nothing.
    public func say(_ line: String) {
        guard style != .quiet else { return }
        write(line + "\n")
    }

    /// Prints a line even in quiet mode: the files a run wrote.
    public func result(_ line: String) {
        write(line + "\n")
    }

    func begin(scene: Scene, engine: String, measuresStems: Bool) {
        state.withLock { state in
            state.scene = scene
            state.engine = engine
            state.measuresStems = measuresStems
            state.names = ["movie"]
            state.started = .now
            state.isLive = true
        }
        if style == .lines { write("playing on \(engine)\n") }
    }

    /// A cue took effect at `time`.
    func step(at time: Double, _ text: String) {
        let line = String(format: "%8.3f  ", time) + "▶ " + text
        append(line, plain: "\n" + String(format: "[%7.3f s] ", time) + text)
    }

    /// A remark of the runner or the engine's playback.
    func note(_ text: String) {
        append("          · " + text, plain: "           · " + text)
    }

    func event(_ entry: EventLog.Entry) {
        append(entry.line, plain: entry.line)
    }

    private func append(_ line: String, plain: String) {
        switch style {
        case .quiet: return
        case .lines: write(plain + "\n")
        case .terminal:
            state.withLock { state in
                state.log.append(line)
                if state.log.count > Self.logLines { state.log.removeFirst(state.log.count - Self.logLines) }
                if !state.isLive { write(line + "\n") }
            }
        }
    }

    /// The movie's clocks, in seconds: the media time heard now (`MediaFileSource.heardClock`), the
    /// one handed to the engine (`clock`), and the main stream's route latency (nil: unknown).
    struct MovieClock: Sendable {
        var heard: Double
        var delivered: Double
        var latency: Double?
    }

    /// The scene advanced to `time`; `levels` are each stream's latest level in dBFS (nil: silence).
    /// `snapshot` is only taken when the panel is about to be redrawn.
    /// `clock` is the movie's clocks, in seconds.
    func tick(
        time: Double, progress: Double, levels: [String: Double?], clock: MovieClock?,
        snapshot: () -> SessionSnapshot
    ) {
        switch style {
        case .quiet:
            return
        case .lines:
            let quarter = Int(progress * 4 + 1e-9)
            let due = state.withLock { state in
                defer { state.quarter = max(state.quarter, quarter) }
                return quarter > state.quarter && quarter < 4
            }
            if due {
                write(String(format: "%8.3f  progress: %d%% of the scene\n", time, quarter * 25))
            }
        case .terminal:
            let due = state.withLock { state in
                state.time = time
                state.progress = progress
                state.clock = clock
                for (name, level) in levels {
                    state.levels[name] = level
                    if !state.names.contains(name), name != "mix" { state.names.append(name) }
                }
                guard let last = state.lastDraw else { return true }
                return ContinuousClock.now - last >= .milliseconds(66)
            }
            if due {
                let snapshot = snapshot()
                state.withLock { state in
                    state.snapshot = snapshot
                    draw(&state)
                }
            }
        }
    }

    /// The scene ended: the panel is drawn a last time and stays on screen.
    func end(snapshot: SessionSnapshot) {
        switch style {
        case .quiet:
            return
        case .lines:
            write("    done: the whole scene played\n")
        case .terminal:
            state.withLock { state in
                state.snapshot = snapshot
                state.progress = 1
                if let scene = state.scene { state.time = scene.duration }
                draw(&state)
                state.isLive = false
            }
        }
    }

    // MARK: Drawing

    private func draw(_ state: inout State) {
        state.lastDraw = .now
        let width = max(60, Self.terminalWidth() - 1)
        var lines: [String] = []
        let title = state.scene.map { "\"\($0.title)\"" } ?? ""
        lines.append(bold("watch-party ") + title + dim(" on \(state.engine)"))
        let duration = state.scene?.duration ?? 0
        let elapsed = state.started.map { SceneRunner.seconds(ContinuousClock.now - $0) } ?? 0
        let speed = elapsed > 0 ? String(format: "  %.1f× real time", state.time / elapsed) : ""
        lines.append(
            bar(fraction: state.progress, width: Self.meterWidth, color: "36")
                + String(format: "  %6.2f s of %.1f s", state.time, duration) + dim(speed))
        lines.append("")
        let unit = state.measuresStems ? "level" : "gain"
        // On a sound server only the gains are known while it plays: no mix meter.
        for name in state.names + (state.measuresStems ? ["mix"] : [])
        where state.levels.keys.contains(name) || name == "mix" {
            let level = state.levels[name] ?? nil
            let text = level.map { String(format: "%6.1f dB", $0) } ?? "  silent "
            let fraction = level.map { max(0, min(1, ($0 + 60) / 60)) } ?? 0
            let color = (level ?? -100) > -6 ? "31" : (level ?? -100) > -20 ? "33" : "32"
            lines.append(
                name.padding(toLength: 13, withPad: " ", startingAt: 0)
                    + bar(fraction: fraction, width: Self.meterWidth, color: color) + "  " + text
                    + (name == "mix" || state.measuresStems ? "" : dim(" \(unit)")))
        }
        lines.append("")
        if let snapshot = state.snapshot {
            lines.append(contentsOf: describe(snapshot))
        }
        lines.append(
            label("movie clock")
                + (state.clock.map {
                    String(format: "%.3f s heard now: the picture to show", $0.heard)
                        + dim(
                            String(format: "  (%.3f s handed to the engine", $0.delivered)
                                + ($0.latency.map { String(format: ", route latency %.1f ms)", $0 * 1000) } ?? ")"))
                } ?? "—"))
        lines.append("")
        lines.append(dim("events (latest last)"))
        let log = state.log.suffix(Self.logLines)
        lines.append(contentsOf: log)
        lines.append(contentsOf: repeatElement("", count: Self.logLines - log.count))

        var output = ""
        if state.drawnLines > 0 { output += "\u{1B}[\(state.drawnLines)A" }
        for line in lines { output += "\r\u{1B}[2K" + Self.clip(line, to: width) + "\n" }
        state.drawnLines = lines.count
        write(output)
    }

    private func describe(_ snapshot: SessionSnapshot) -> [String] {
        let configuration =
            snapshot.activeConfiguration.map { "\($0.category), \($0.options), mode \($0.mode)" } ?? "inactive"
        var owners: [String: [String]] = [:]
        var order: [String] = []
        for lease in snapshot.leases {
            if owners[lease.owner] == nil { order.append(lease.owner) }
            owners[lease.owner, default: []].append("\(lease.type)")
        }
        let leases =
            order.isEmpty
            ? "none" : order.map { "\($0): " + owners[$0]!.joined(separator: "+") }.joined(separator: " · ")
        let ducks =
            snapshot.ducks.isEmpty
            ? "none" : snapshot.ducks.map { "\($0.owner) (\($0.style))" }.joined(separator: " · ")
        let main = String(
            format: "volume %.2f × duck %.2f = gain %.3f%@", snapshot.mainVolume, snapshot.duckFactor,
            snapshot.mainGain, snapshot.isMainPaused ? ", paused" : "")
        let interruption =
            switch snapshot.interruption {
            case .none: "none"
            case .interrupted: "INTERRUPTED (rendering suspended)"
            case .endedWaitingForHost: "ended, waiting for the host's play"
            }
        var lifecycle = [snapshot.isInBackground ? "background" : "foreground"]
        lifecycle.append(snapshot.isSuspended ? "rendering suspended" : "rendering")
        if snapshot.isOtherAudioPlaying { lifecycle.append("another app playing") }
        if snapshot.quantum > 0 { lifecycle.append("quantum \(snapshot.quantum)") }
        if let route = snapshot.currentRoute { lifecycle.append("route \(route)") }
        return [
            label("session") + configuration,
            label("leases") + leases,
            label("ducks") + ducks,
            label("main") + main,
            label("interruption") + interruption,
            label("lifecycle") + lifecycle.joined(separator: " · "),
        ]
    }

    private func label(_ text: String) -> String { dim(text.padding(toLength: 13, withPad: " ", startingAt: 0)) }
    private func bold(_ text: String) -> String { "\u{1B}[1m" + text + "\u{1B}[0m" }
    private func dim(_ text: String) -> String { "\u{1B}[2m" + text + "\u{1B}[0m" }

    /// A bar of `width` cells, filled to `fraction` with eighth blocks.
    private func bar(fraction: Double, width: Int, color: String) -> String {
        let eighths = Int((max(0, min(1, fraction)) * Double(width * 8)).rounded())
        let full = eighths / 8
        let partial = eighths % 8
        let blocks = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        var text = String(repeating: "█", count: full) + blocks[partial]
        let used = full + (partial > 0 ? 1 : 0)
        text = "\u{1B}[\(color)m" + text + "\u{1B}[0m" + dim(String(repeating: "·", count: width - used))
        return "▕" + text + "▏"
    }

    /// `line` cut to `width` visible characters, escapes kept.
    static func clip(_ line: String, to width: Int) -> String {
        var visible = 0
        var result = ""
        var inEscape = false
        for character in line {
            if character == "\u{1B}" { inEscape = true }
            if inEscape {
                result.append(character)
                if character.isLetter { inEscape = false }
                continue
            }
            guard visible < width else { break }
            result.append(character)
            visible += 1
        }
        return result + "\u{1B}[0m"
    }

    private static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 100 }
        return Int(size.ws_col)
    }

    private func write(_ text: String) {
        output(text)
    }
}
