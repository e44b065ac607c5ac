/// Which of a stream's loudness-duck readings an engine reports: the readings are looked at often (each
/// quantum offline, each 100 ms on a sound server) and move a little each time, so a reading is
/// reported only when the duck was set or removed, its depth moved by ``LoudnessDuckReading/reportStep``
/// dB or more since the last report, or it came back to 0 (released). Both engines keep one, on their
/// control side.
package struct LoudnessDuckReports: Sendable {
    /// The depth last reported per stream with a loudness duck on.
    private var reported: [StreamID: Float] = [:]

    package init() {}

    /// The event for `reading`, the stream's reading now, if it is to be reported.
    package mutating func event(for reading: LoudnessDuckReading?, of stream: StreamID) -> EngineEvent? {
        let last = reported[stream]
        let changed: Bool
        if let reading {
            changed =
                last.map {
                    abs(reading.depth - $0) >= LoudnessDuckReading.reportStep || (reading.depth == 0 && $0 != 0)
                } ?? true
        } else {
            changed = last != nil
        }
        guard changed else { return nil }
        reported[stream] = reading?.depth
        return .loudnessDuckChanged(stream: stream, reading: reading)
    }

    /// Whether the stream's last report was of a duck on: its release is still to be reported.
    package func isOn(_ stream: StreamID) -> Bool { reported[stream] != nil }

    /// Forgets a stream that closed.
    package mutating func forget(_ stream: StreamID) { reported[stream] = nil }
}

extension LoudnessDuckReading {
    /// How far, in dB, a loudness duck's depth moves before an engine reports it again
    /// (``EngineEvent/loudnessDuckChanged(stream:reading:)``).
    public static let reportStep: Float = 1
}
