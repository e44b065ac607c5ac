import Foundation
import SharedSession
import SharedSessionTestSupport
import Testing

/// The K-weighting across frequency and sample rate: a sine's loudness against the response of the
/// standard's own filters (BS.1770-4 Tables 1 and 2, 48 kHz) evaluated in the frequency domain, here,
/// independently of the meter's time-domain filtering. Tech 3341's signals are all 1 kHz, where the
/// high-pass does nothing: this is what shows both stages at work, and the filters the meter designs
/// for other rates.
extension LoudnessMeterTests {
    /// The loudness a stereo sine of peak `amplitude` at `frequency` reads after 10 s at `rate`.
    static func sineLoudness(frequency: Double, amplitude: Double, rate: Int) throws -> Double {
        let meter = try LoudnessMeter(sampleRate: rate)
        let frames = rate * 10
        var samples = [Float](repeating: 0, count: frames * 2)
        for frame in 0..<frames {
            let value = Float(amplitude * sin(2 * Double.pi * frequency * Double(frame) / Double(rate)))
            samples[frame * 2] = value
            samples[frame * 2 + 1] = value
        }
        samples.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: frames) }
        return meter.integrated
    }

    @Test(
        "sines from 30 Hz to 12 kHz read the standard's K-weighting response within 0.1 dB at 48 kHz, and within 0.2 dB at 44.1, 32 and 96 kHz",
        arguments: [48_000, 44_100, 32_000, 96_000])
    func weightingAcrossFrequencies(rate: Int) throws {
        let amplitude = pow(10, -20.0 / 20)
        var worst = 0.0
        for frequency in [30.0, 50, 100, 200, 500, 1000, 2000, 4000, 8000, 12_000]
        where frequency < Double(rate) / 2.5 {
            let expected = KWeighting.stereoSineLoudness(level: -20, frequency: frequency)
            let measured = try Self.sineLoudness(frequency: frequency, amplitude: amplitude, rate: rate)
            worst = max(worst, abs(measured - expected))
            #expect(
                abs(measured - expected) <= (rate == 48_000 ? 0.1 : 0.2),
                "\(frequency) Hz at \(rate) Hz: \(measured) LUFS, the standard's response gives \(expected)")
        }
        print("[measure] K-weighting at \(rate) Hz: worst \(worst) dB from the standard's response, 30 Hz to 12 kHz")
    }

    @Test("Tech 3341 case 1 at 44.1 kHz: a stereo 1 kHz sine at −23 dBFS reads −23.0 LUFS")
    func case1At44100() throws {
        let measured = try Self.sineLoudness(frequency: 1000, amplitude: pow(10, -23.0 / 20), rate: 44_100)
        print("[measure] Tech 3341 case 1 at 44.1 kHz: I \(measured) LUFS")
        #expect(abs(measured + 23) <= 0.1)
    }

    @Test("a sample rate outside 8 through 384 kHz is refused, naming it")
    func badRate() {
        let low = #expect(throws: SessionError.self) { try LoudnessMeter(sampleRate: 4000) }
        #expect(low?.code == .invalidValue)
        #expect(low?.message.contains("sample rate (Hz) 4000.0") == true, "\(low?.message ?? "accepted")")
        let high = #expect(throws: SessionError.self) { try LoudnessMeter(sampleRate: 1_000_000) }
        #expect(high?.code == .invalidValue)
        #expect(high?.message.contains("sample rate (Hz) 1000000.0") == true, "\(high?.message ?? "accepted")")
    }
}
