import Foundation
import SharedSession
import SharedSessionTesting
import Testing

/// Interleaved stereo of `frames` frames: `left(frame)` on the left, `right(frame)` on the right.
private func stereo(_ frames: Int, left: (Int) -> Double, right: ((Int) -> Double)? = nil) -> [Float] {
    var samples: [Float] = []
    samples.reserveCapacity(frames * 2)
    for frame in 0..<frames {
        samples.append(Float(left(frame)))
        samples.append(Float(right?(frame) ?? left(frame)))
    }
    return samples
}

private func sine(_ frequency: Double, _ amplitude: Double) -> (Int) -> Double {
    { amplitude * sin(2 * Double.pi * frequency * Double($0) / 48_000) }
}

@Suite("LevelMeter")
struct LevelMeterTests {
    let meter = LevelMeter()

    @Test("a 0.5 sine reads −9.03 dBFS RMS, −6.02 dBFS peak and −6.02 dBFS as a tone, to 0.001 dB")
    func sineLevels() throws {
        let samples = stereo(48_000, left: sine(1000, 0.5))
        #expect(try abs(meter.rms(samples) - (-9.0309)) < 0.001)
        #expect(try abs(meter.peak(samples) - (-6.0206)) < 0.001)
        #expect(try abs(meter.toneLevel(samples, frequency: 1000) - (-6.0206)) < 0.001)
        #expect(try abs(meter.rms(samples, lastMilliseconds: 100) - (-9.0309)) < 0.001)
        #expect(meter.frameCount(samples) == 48_000)
    }

    @Test("the Goertzel level of one tone is blind to another over whole-cycle windows")
    func tonesApart() throws {
        let samples = stereo(4800, left: { sine(1000, 0.5)($0) + sine(3000, 0.25)($0) })
        let tenMilliseconds = 0..<480
        #expect(try abs(meter.toneLevel(samples, frequency: 1000, frames: tenMilliseconds) - (-6.0206)) < 0.001)
        #expect(try abs(meter.toneLevel(samples, frequency: 3000, frames: tenMilliseconds) - (-12.0412)) < 0.001)
        #expect(try meter.toneLevel(samples, frequency: 2000, frames: tenMilliseconds) < -100)
    }

    @Test("each channel is read on its own")
    func channels() throws {
        let samples = stereo(4800, left: sine(1000, 0.5), right: sine(1000, 0.05))
        #expect(try abs(meter.toneLevel(samples, frequency: 1000) - (-6.0206)) < 0.001)
        #expect(try abs(LevelMeter(channel: 1).toneLevel(samples, frequency: 1000) - (-26.0206)) < 0.001)
        #expect(LevelMeter(channels: 1).frameCount(samples) == 9600)
    }

    @Test("silence reads −180 dBFS and isSilent checks every channel")
    func silence() throws {
        var samples = [Float](repeating: 0, count: 9600)
        #expect(try meter.rms(samples) == LevelMeter.silence)
        #expect(try meter.toneLevel(samples, frequency: 1000) == LevelMeter.silence)
        #expect(try meter.isSilent(samples))
        samples[9599] = 1e-6  // the right channel of the last frame
        #expect(try !meter.isSilent(samples))
        #expect(try meter.isSilent(samples, frames: 0..<4799))
        // No audio is not silence: it is refused (it read −180 dBFS, so a silence check passed on it).
        #expect((#expect(throws: MeasurementError.self) { try meter.rms([]) })?.code == .noAudio)
    }

    @Test("the largest step of a sine is 2πfA/48000; a gap of one frame is far larger")
    func largestStep() throws {
        var samples = stereo(4800, left: sine(1000, 0.5))
        let bound = Float(2 * Double.pi * 1000 * 0.5 / 48_000)
        #expect(try meter.largestStep(samples) <= bound)
        #expect(try meter.largestStep(samples) > bound * 0.99)
        samples[2 * 12] = 0  // a dropped sample at a crest (frame 12 is 90° into the cycle)
        #expect(try meter.largestStep(samples) > 0.4)
        #expect(try meter.largestStep(samples, frames: 100..<4800) <= bound)
    }

    @Test("first frames and first windows at, below and above a threshold")
    func edges() throws {
        // A linear fade from 1 to 0 over 4800 frames, then 4800 frames of 0.
        let samples = stereo(9600, left: { max(0, 1 - Double($0) / 4800) })
        #expect(try meter.firstFrame(samples, atOrBelow: 0.5) == 2400)
        #expect(try meter.firstFrame(samples, atOrAbove: 0.5, frames: 3000..<9600) == nil)
        #expect(try meter.firstFrame(samples, atOrAbove: 0.99) == 0)
        let tone = stereo(9600, left: { sine(1000, 0.5)($0) * (Double($0) < 4800 ? 1 : 0.1) })
        let end = try meter.firstWindowEnd(tone, frequency: 1000, atOrBelow: -6.0206 - 19)
        #expect(end.map { $0 > 4800 && $0 <= 4800 + 480 } == true, "\(String(describing: end))")
        #expect(try meter.firstWindowEnd(tone, frequency: 1000, atOrAbove: -6.1) == 480)
        #expect(try meter.firstWindowEnd(tone, frequency: 1000, atOrAbove: 0) == nil)
        #expect(try meter.toneLevels(tone, frequency: 1000, window: 480, hop: 480).count == 20)
    }

    @Test("no audio, an empty range or one past the end is refused by every measurement: nothing passes on nothing")
    func refusesNothing() throws {
        let empty: [Float] = []
        let samples = stereo(4800, left: sine(1000, 0.5))
        let refusals: [(String, () throws -> Void)] = [
            ("rms", { _ = try meter.rms(empty) }),
            ("rms of the last 100 ms of 50 ms", { _ = try meter.rms(Array(samples[..<4800]), lastMilliseconds: 100) }),
            ("rmsAmplitude", { _ = try meter.rmsAmplitude(empty) }),
            ("peak", { _ = try meter.peak(empty) }),
            ("toneLevel", { _ = try meter.toneLevel(empty, frequency: 1000) }),
            ("rmsOfAllChannels", { _ = try meter.rmsOfAllChannels(empty) }),
            ("partialsLevel", { _ = try meter.partialsLevel(empty, frequencies: [1000]) }),
            ("toneLevels", { _ = try meter.toneLevels(empty, frequency: 1000, window: 480, hop: 48) }),
            (
                "toneLevels, window longer than the audio",
                {
                    _ = try meter.toneLevels(samples, frequency: 1000, window: 9600, hop: 48)
                }
            ),
            ("isSilent", { _ = try meter.isSilent(empty) }),
            ("isSilent past the end", { _ = try meter.isSilent(samples, frames: 4000..<9600) }),
            ("isSilent of an empty range", { _ = try meter.isSilent(samples, frames: 100..<100) }),
            ("largestStep", { _ = try meter.largestStep(empty) }),
            ("largestStep of one frame", { _ = try meter.largestStep(samples, frames: 0..<1) }),
            ("largestStep past the end", { _ = try meter.largestStep(samples, frames: 4700..<4801) }),
            ("firstFrame", { _ = try meter.firstFrame(empty, atOrBelow: 0) }),
            ("firstWindowEnd", { _ = try meter.firstWindowEnd(empty, frequency: 1000, atOrAbove: -6) }),
        ]
        for (name, measure) in refusals {
            #expect(throws: MeasurementError.self, "\(name)") { try measure() }
        }
        let missing = #expect(throws: MeasurementError.self) { try meter.isSilent(empty) }
        #expect(missing?.code == .noAudio)
        #expect(missing?.description.contains("missing or empty stem") == true)
        let outside = #expect(throws: MeasurementError.self) { try meter.rms(samples, frames: -1..<10) }
        #expect(outside?.code == .rangeOutsideAudio)
    }

    @Test("a render's stem is required: a stream not rendered or a stem of the wrong length throws")
    func stemIsRequired() throws {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(source: try SineSource(frequency: 1000, amplitude: 0.5))
        let rendered = try engine.render(duration: .milliseconds(100))
        #expect(try rendered.stem(main).count == 4800 * 2)
        #expect(try rendered.stem(main.id) == rendered.stems[main.id])
        let other = #expect(throws: MeasurementError.self) { try rendered.stem(StreamID(rawValue: 99)) }
        #expect(other?.code == .missingStem)
        // A stem shorter than the render (an engine that dropped frames) is refused, not measured.
        let short = RenderedAudio(
            frames: rendered.frames, mix: rendered.mix, stems: [main.id: Array(rendered.mix.dropLast(2))])
        #expect((#expect(throws: MeasurementError.self) { try short.stem(main) })?.code == .wrongLength)
        let nothing = RenderedAudio(frames: 0, mix: [], stems: [main.id: []])
        #expect((#expect(throws: MeasurementError.self) { try nothing.stem(main) })?.code == .noAudio)
        main.close()
        let afterClose = try engine.render(duration: .milliseconds(10))
        #expect((#expect(throws: MeasurementError.self) { try afterClose.stem(main) })?.code == .missingStem)
    }

    @Test("units: decibels, amplitudes, frames and milliseconds")
    func units() throws {
        #expect(abs(LevelMeter.decibels(0.1) + 20) < 1e-9)
        #expect(abs(LevelMeter.amplitude(decibels: -20) - 0.1) < 1e-12)
        #expect(LevelMeter.decibels(0) == LevelMeter.silence)
        #expect(meter.frames(milliseconds: 10) == 480)
        #expect(meter.milliseconds(frames: 4800) == 100)
        #expect(meter.last(milliseconds: 100, of: [Float](repeating: 0, count: 20_000)) == 5200..<10_000)
    }
}

extension LevelMeterTests {
    @Test("partialsLevel reads several tones of a mix together; rmsOfAllChannels reads every channel")
    func partialsAndAllChannels() throws {
        let meter = LevelMeter()
        var samples: [Float] = []
        for frame in 0..<4800 {
            let time = Double(frame) / 48_000
            let left = 0.5 * sin(2 * Double.pi * 1000 * time) + 0.25 * sin(2 * Double.pi * 3000 * time)
            samples += [Float(left), 0]
        }
        // Power A²/2 per partial, averaged over the two channels (the right one is silent).
        let both: Double = 0.5 * 0.5 / 2 + 0.25 * 0.25 / 2
        let expected: Double = 20 * log10((both / 2).squareRoot())
        let oneTone: Double = 20 * log10((0.5 * 0.5 / 4 as Double).squareRoot())
        #expect(try abs(meter.partialsLevel(samples, frequencies: [1000, 3000]) - expected) < 0.01)
        #expect(try abs(meter.partialsLevel(samples, frequencies: [1000]) - oneTone) < 0.01)
        var constant: [Float] = []
        for _ in 0..<480 { constant += [0.5, 0] }
        let halfPower: Double = 20 * log10((0.25 / 2 as Double).squareRoot())
        #expect(try abs(meter.rmsOfAllChannels(constant) - halfPower) < 0.001)
        #expect(throws: MeasurementError.self) { try meter.partialsLevel([], frequencies: [1000]) }
    }
}

extension LevelMeterTests {
    /// The watch-party example's far-end voice: 600 and 1200 Hz swelling three times a second.
    static func swellingVoice(frames: Int, plus movie: Double = 0) -> [Float] {
        (0..<frames).flatMap { frame -> [Float] in
            let time = Double(frame) / 48_000
            let swell = 0.35 + 0.65 * pow(sin(Double.pi * 3 * time), 2)
            let voice = (0.3 * sin(2 * Double.pi * 600 * time) + 0.12 * sin(2 * Double.pi * 1200 * time)) * swell
            let tone = movie * (sin(2 * Double.pi * 220 * time) + sin(2 * Double.pi * 330 * time))
            let sample = Float(voice + tone)
            return [sample, sample]
        }
    }

    @Test("a Hann window reads a steady partial exactly and keeps a swelling tone out of its neighbours")
    func hannWindowKeepsMovingTonesOut() throws {
        let meter = LevelMeter()
        let movie = [220.0, 330.0]
        let voice = Self.swellingVoice(frames: 48_000)
        let voiceLevel = try meter.partialsLevel(voice, frequencies: [600, 1200], frames: 0..<4800, window: .hann)
        // 100 ms windows 311 frames apart (a prime: they fall at every phase of the swell) over one second.
        var rectangular = LevelMeter.silence
        var hann = LevelMeter.silence
        for start in stride(from: 0, through: 48_000 - 4800, by: 311) {
            let frames = start..<(start + 4800)
            rectangular = max(rectangular, try meter.partialsLevel(voice, frequencies: movie, frames: frames))
            hann = max(hann, try meter.partialsLevel(voice, frequencies: movie, frames: frames, window: .hann))
        }
        // Measured: up to 39.2 dB under the voice with every sample counted alike, 101 dB under with Hann.
        #expect(rectangular > voiceLevel - 45, "the leak a Hann window is for: \(rectangular - voiceLevel) dB")
        #expect(hann < voiceLevel - 90, "a Hann window lets the voice into 220/330 Hz at \(hann - voiceLevel) dB")
        // A movie 22 dB under the voice reads its own level: 2 × 0.05² / 2 of power, −26.02 dBFS.
        let mixed = Self.swellingVoice(frames: 4800 * 3, plus: 0.05)
        let expected = 20 * log10((2 * 0.05 * 0.05 / 2 as Double).squareRoot())
        for start in [0, 3001, 4800 * 2] {
            let read = try meter.partialsLevel(mixed, frequencies: movie, frames: start..<(start + 4800), window: .hann)
            #expect(abs(read - expected) < 0.01, "the movie read at \(read) dB, not \(expected)")
        }
    }
}
