import Foundation
import SharedSession
import Testing

/// The BS.1770 meter against EBU Tech 3341's synthetic test signals ("EBU Mode" minimum requirements,
/// cases 1-6, 9 and 12: the ones made of 1 kHz sines; 7, 8, 10, 11, 13 and 14 are recorded programme
/// and tone files the EBU distributes, not made here). Tolerance: the standard's ±0.1 LU.
@Suite("Loudness (BS.1770, EBU Tech 3341)")
struct LoudnessMeterTests {
    /// A 1 kHz sine on every channel, at `levels[channel]` dBFS (peak), for `seconds`, as a segment.
    struct Segment {
        var levels: [Double]
        var seconds: Double
    }

    /// Feeds `segments` one after the other, in 1024-frame calls, the sine's phase running on; calls
    /// `each` after every 100 ms of signal with the time fed so far.
    static func feed(
        _ meter: LoudnessMeter, _ segments: [Segment], each: (Double) -> Void = { _ in }
    ) {
        let channels = meter.channels
        var phase = 0.0
        var fed = 0
        var buffer = [Float](repeating: 0, count: 1024 * channels)
        for segment in segments {
            let amplitudes = segment.levels.map { pow(10, $0 / 20) }
            var remaining = Int((segment.seconds * 48_000).rounded())
            while remaining > 0 {
                let frames = min(remaining, 1024, 4800 - fed % 4800)
                for frame in 0..<frames {
                    let value = sin(phase)
                    phase += 2 * .pi * 1000 / 48_000
                    for channel in 0..<channels {
                        buffer[frame * channels + channel] = Float(amplitudes[channel] * value)
                    }
                }
                buffer.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: frames) }
                remaining -= frames
                fed += frames
                if fed % 4800 == 0 { each(Double(fed) / 48_000) }
            }
        }
    }

    static func stereo(_ level: Double, _ seconds: Double) -> Segment {
        Segment(levels: [level, level], seconds: seconds)
    }

    @Test(
        "case 1 and 2: a stereo 1 kHz sine at -23 and -33 dBFS reads -23.0 and -33.0 LUFS, momentary, short-term and integrated"
    )
    func cases1and2() throws {
        for level in [-23.0, -33.0] {
            let meter = try LoudnessMeter()
            Self.feed(meter, [Self.stereo(level, 20)])
            print(
                "[measure] Tech 3341 case \(level == -23 ? 1 : 2): M \(meter.momentary), S \(meter.shortTerm), I "
                    + "\(meter.integrated) LUFS"
            )
            #expect(abs(meter.momentary - level) <= 0.1)
            #expect(abs(meter.shortTerm - level) <= 0.1)
            #expect(abs(meter.integrated - level) <= 0.1)
        }
    }

    @Test("cases 3, 4 and 5: the absolute and relative gates keep the integrated loudness at -23.0 LUFS")
    func gating() throws {
        let cases: [(Int, [Segment])] = [
            (3, [Self.stereo(-36, 10), Self.stereo(-23, 60), Self.stereo(-36, 10)]),
            (
                4,
                [
                    Self.stereo(-72, 10), Self.stereo(-36, 10), Self.stereo(-23, 60), Self.stereo(-36, 10),
                    Self.stereo(-72, 10),
                ]
            ),
            (5, [Self.stereo(-26, 20), Self.stereo(-20, 20.1), Self.stereo(-26, 20)]),
        ]
        for (number, segments) in cases {
            let meter = try LoudnessMeter()
            Self.feed(meter, segments)
            print("[measure] Tech 3341 case \(number): I \(meter.integrated) LUFS")
            #expect(abs(meter.integrated - -23) <= 0.1, "case \(number)")
        }
    }

    @Test("case 6: 5.0 channels (L R -28, C -24, Ls Rs -30 dBFS) with the surrounds weighted 1.41 read -23.0 LUFS")
    func case6() throws {
        let meter = try LoudnessMeter(channelWeights: [1, 1, 1, 1.41, 1.41])
        Self.feed(meter, [Segment(levels: [-28, -28, -24, -30, -30], seconds: 20)])
        print("[measure] Tech 3341 case 6: I \(meter.integrated) LUFS")
        #expect(abs(meter.integrated - -23) <= 0.1)
    }

    @Test(
        "cases 9 and 12: the short-term (3 s) and momentary (400 ms) windows read -23.0 LUFS throughout a level that alternates with their period"
    )
    func windows() throws {
        let shortTerm = try LoudnessMeter()
        var shortTermReadings: [Double] = []
        Self.feed(
            shortTerm, Array(repeating: [Self.stereo(-20, 1.34), Self.stereo(-30, 1.66)], count: 20).flatMap { $0 }
        ) {
            if $0 >= 3 { shortTermReadings.append(shortTerm.shortTerm) }
        }
        let momentary = try LoudnessMeter()
        var momentaryReadings: [Double] = []
        Self.feed(
            momentary, Array(repeating: [Self.stereo(-20, 0.18), Self.stereo(-30, 0.22)], count: 20).flatMap { $0 }
        ) {
            if $0 >= 1 { momentaryReadings.append(momentary.momentary) }
        }
        print(
            "[measure] Tech 3341 case 9: S from \(shortTermReadings.min()!) to \(shortTermReadings.max()!) LUFS; "
                + "case 12: M from \(momentaryReadings.min()!) to \(momentaryReadings.max()!) LUFS")
        #expect(shortTermReadings.count > 500)
        #expect(shortTermReadings.allSatisfy { abs($0 - -23) <= 0.1 })
        #expect(momentaryReadings.count > 60)
        #expect(momentaryReadings.allSatisfy { abs($0 - -23) <= 0.1 })
    }

    @Test("bad channel counts and weights are typed errors naming the value")
    func badInput() {
        #expect(throws: SessionError.self) { try LoudnessMeter(channelWeights: []) }
        #expect(throws: SessionError.self) { try LoudnessMeter(channelWeights: [1, -1]) }
        #expect(throws: SessionError.self) { try LoudnessMeter(channelWeights: [1, .nan]) }
        do {
            _ = try LoudnessMeter(channelWeights: [1, -1])
        } catch {
            #expect(error.code == .invalidValue)
            #expect(error.message.contains("channel weight -1.0"))
        }
    }
}
