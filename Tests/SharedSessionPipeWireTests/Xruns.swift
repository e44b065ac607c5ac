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
    /// in all; the last one is returned. A glitch of the server's graph on a loaded machine moves what
    /// is heard by up to a quantum, which the clock follows from the next cycle's timing: a reading
    /// across one measures the machine, not the clock. A daemon that glitches in every reading is
    /// measured anyway, so a clock or a render path that makes the glitches still fails.
    static func undisturbed<Reading>(
        _ what: String, attempts: Int = 3, _ reading: () async throws -> Reading
    ) async throws -> Reading {
        var attempt = 1
        while true {
            let before = logged()
            let result = try await reading()
            let xruns = logged() - before
            guard xruns != 0, attempt < attempts else { return result }
            print("[measure] \(what): the daemon logged \(xruns) xrun(s) during reading \(attempt); read again")
            attempt += 1
        }
    }
}
