import Foundation

/// Compares the levels read at a run's marks with what its scene expects.
public enum MarkCheck {
    /// One line per mark: its time, label and each stream's level, with the expected one beside it
    /// and whether it is within `tolerance` dB. `failures` counts the levels that are not, except
    /// where the recording lost frames around the mark (PipeWire on a loaded machine): those are
    /// marked `?` with the frames lost, and not counted.
    public static func lines(for run: SceneRun, tolerance: Double, failures: inout Int) -> [String] {
        guard !run.marks.isEmpty else { return [] }
        var lines = [
            "levels at the scene's marks (RMS of the 100 ms before each, dBFS; expected within "
                + String(format: "%.1f", tolerance) + " dB):"
        ]
        for mark in run.marks {
            var parts: [String] = []
            var unsure = false
            for name in Scene.streamNames where mark.measured[name] != nil || mark.expected[name] != nil {
                let measured = mark.measured[name] ?? nil
                var part = "\(name) " + format(measured)
                if let expected = mark.expected[name] {
                    let ok = matches(measured, expected, tolerance: tolerance) && mark.measured[name] != nil
                    if ok {
                        part += " ✓"
                    } else if mark.recordingGap > 0 {
                        // Not counted: the recording, not the session, is what is known to be off here.
                        part += " ? expected " + format(expected)
                        unsure = true
                    } else {
                        failures += 1
                        part += " ✗ expected " + format(expected)
                    }
                }
                parts.append(part)
            }
            if unsure {
                parts.append("(the recording lost \(mark.recordingGap) frames in this step: ? is not counted)")
            }
            lines.append(
                String(format: "  %7.3f s  ", mark.time) + mark.label.padding(toLength: 30, withPad: " ", startingAt: 0)
                    + "  " + parts.joined(separator: ", "))
        }
        return lines
    }

    /// Whether a measured level is within `tolerance` of the expected one; silence only matches silence.
    public static func matches(_ measured: Double?, _ expected: Double?, tolerance: Double) -> Bool {
        switch (measured, expected) {
        case (nil, nil): true
        case (let measured?, let expected?): abs(measured - expected) <= tolerance
        default: false
        }
    }

    static func format(_ level: Double?) -> String {
        level.map { String(format: "%.2f", $0) } ?? "silent"
    }
}
