import Testing

@testable import SharedSession

/// Which loudness-duck readings an engine reports, alone: both engines look at the readings far more
/// often than they are worth an event.
@Suite("The loudness duck's reports")
struct LoudnessDuckReportsTests {
    static let stream = StreamID(rawValue: 1)

    static func reading(_ depth: Float) -> LoudnessDuckReading {
        LoudnessDuckReading(depth: depth, mainLoudness: -20, sourceLoudness: -12)
    }

    @Test("set, moved by a step, back to 0 and removed are reported; moves under a step are not")
    func throttled() {
        var reports = LoudnessDuckReports()
        #expect(reports.event(for: nil, of: Self.stream) == nil, "nothing set, nothing to say")
        #expect(reports.event(for: Self.reading(-0.6), of: Self.stream) != nil, "set: told whatever its depth")
        #expect(reports.isOn(Self.stream))
        #expect(reports.event(for: Self.reading(-1.4), of: Self.stream) == nil, "0.8 dB from the last report")
        let moved = reports.event(for: Self.reading(-1.7), of: Self.stream)
        #expect(moved == .loudnessDuckChanged(stream: Self.stream, reading: Self.reading(-1.7)))
        #expect(reports.event(for: Self.reading(-0.8), of: Self.stream) == nil, "0.9 dB back up")
        #expect(reports.event(for: Self.reading(-0.6), of: Self.stream) != nil, "1.1 dB back up")
        #expect(reports.event(for: Self.reading(0), of: Self.stream) != nil, "released: 0.6 dB, but back at 0")
        #expect(reports.event(for: Self.reading(0), of: Self.stream) == nil)
        #expect(reports.event(for: nil, of: Self.stream) == .loudnessDuckChanged(stream: Self.stream, reading: nil))
        #expect(!reports.isOn(Self.stream))
        #expect(reports.event(for: nil, of: Self.stream) == nil)
    }

    @Test("streams are reported each on its own, and a closed stream is forgotten")
    func perStream() {
        var reports = LoudnessDuckReports()
        let other = StreamID(rawValue: 2)
        #expect(reports.event(for: Self.reading(-3), of: Self.stream) != nil)
        #expect(reports.event(for: Self.reading(-3), of: other) != nil)
        reports.forget(Self.stream)
        #expect(!reports.isOn(Self.stream))
        #expect(reports.event(for: Self.reading(-3), of: Self.stream) != nil, "a stream forgotten starts again")
        #expect(reports.event(for: Self.reading(-3.5), of: other) == nil)
    }
}
