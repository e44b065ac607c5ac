import Foundation

/// The xruns the private daemon logs (Scripts/pipewire-headless starts it with each one logged): a
/// node of the graph that did not finish its cycle in time, which the listener hears as a glitch.
enum Xruns {
    /// The private daemon's log.
    static var logPath: String {
        (ProcessInfo.processInfo.environment["SHAREDSESSION_PW_DIR"] ?? "/tmp/sharedsession-pw") + "/logs/pipewire.log"
    }

    /// The xruns logged since the daemon started: 0.3.65 logs "client too slow!", 1.4.2 "graph xrun"
    /// (with the count of those its rate limit suppressed).
    static func logged() -> Int {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return 0 }
        var count = 0
        for line in text.split(separator: "\n") where line.contains("client too slow!") || line.contains("graph xrun") {
            count += 1
            if line.hasSuffix(" suppressed)"), let open = line.range(of: "(", options: .backwards),
                let suppressed = Int(line[open.upperBound...].prefix { $0.isNumber })
            {
                count += suppressed
            }
        }
        return count
    }

    /// `reading`, taken again when the daemon logged an xrun while it ran, up to `attempts` readings
    /// in all; the first undisturbed one is returned, else the one with the fewest xruns (the later on
    /// a tie). A glitch of the server's graph on a loaded machine moves what is heard by up to a
    /// quantum, which the clock follows from the next cycle's timing, and slides the echo canceller's
    /// capture against its reference, which it takes seconds to learn again: a reading across one
    /// measures the machine, not the library. The choice is made on the daemon's log, never on the
    /// reading, and a daemon that glitches in every reading is measured anyway, so a clock, a render
    /// path or a canceller that makes the glitches still fails.
    static func undisturbed<Reading>(
        _ what: String, attempts: Int = 3, _ reading: () async throws -> Reading
    ) async throws -> Reading {
        var best: (reading: Reading, xruns: Int)?
        for attempt in 1...max(1, attempts) {
            let before = logged()
            let result = try await reading()
            let xruns = logged() - before
            if xruns == 0 { return result }
            if best.map({ xruns <= $0.xruns }) ?? true { best = (result, xruns) }
            if attempt < attempts {
                print("[measure] \(what): the daemon logged \(xruns) xrun(s) during reading \(attempt); read again")
            }
        }
        guard let best else { preconditionFailure("at least one reading is taken") }
        print("[measure] \(what): every reading had xruns; the one with \(best.xruns) is kept")
        return best.reading
    }
}
