import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

extension DaemonTests {
    @Suite("Loudness ducking on PipeWire")
    struct LoudnessDuckTests {
        /// The movie: a 1 kHz sine at 0.5 for 8 s, then 12 dB quieter for 8 s, stereo.
        static func movie() throws -> PCMBufferSource {
            let quiet = 0.5 * pow(10, -12.0 / 20)
            let samples = (0..<(16 * 48_000)).flatMap { frame -> [Float] in
                let amplitude = frame < 8 * 48_000 ? 0.5 : quiet
                let value = Float(amplitude * sin(2 * Double.pi * mainTone * Double(frame) / 48_000))
                return [value, value]
            }
            return try PCMBufferSource(samples: samples, loops: false)
        }

        @Test(
            "daemon: a far end's voice is held 10 LU above the movie within 1 LU as the movie steps down 12 dB, measured at the sink; the depth is reported"
        )
        func holdsTheDifference() async throws {
            let rig = try SessionRig()
            defer { rig.stop() }
            // The far end talks throughout: a 3 kHz sine at 0.25, so its loudness while it speaks is
            // the sine's. Both tones are read off the sink's monitor by the Goertzel algorithm, each
            // blind to the other; their loudness follows from the standard's K-weighting at each.
            let farEnd = try rig.session.openStream(
                StreamDescriptor(name: "far end", role: .communication),
                source: SineSource(frequency: overlayTone, amplitude: 0.25), owner: "party")
            let duck = try rig.session.duck(DuckRequest(owner: "party", style: .followLoudness(farEnd.id, margin: nil)))
            let start = rig.recorder.mark()
            let main = try rig.session.openMainStream(source: try Self.movie())
            try await rig.recorder.record(for: .milliseconds(16_300))
            let samples = rig.recorder.samples

            // The difference heard over 3 s windows from 4 s into each 8 s section (the step to the quiet
            // section comes 8 s after the open, plus the route's latency; the duck settles within 3 s of it).
            func difference(from second: Double) throws -> (difference: Double, depth: Double) {
                let first = start + Int(second * 48_000)
                let windows = (0..<300).map { first + $0 * 480 }
                let voice = DaemonTests.EngineTests.median(
                    try windows.map { try meter.toneLevel(samples, frequency: overlayTone, frames: $0..<($0 + 480)) })
                let movie = DaemonTests.EngineTests.median(
                    try windows.map { try meter.toneLevel(samples, frequency: mainTone, frames: $0..<($0 + 480)) })
                let difference =
                    KWeighting.stereoSineLoudness(level: voice, frequency: overlayTone)
                    - KWeighting.stereoSineLoudness(level: movie, frequency: mainTone)
                let full = second < 8 ? mainLevel : mainLevel - 12
                return (difference, movie - full)
            }
            let loud = try difference(from: 4.5)
            let quiet = try difference(from: 12.5)
            print(
                "[measure] loudness duck on PipeWire (quantum \(rig.engine.quantum)): voice − movie "
                    + "\(loud.difference) LU at depth \(loud.depth) dB; after the movie stepped down 12 dB, "
                    + "\(quiet.difference) LU at depth \(quiet.depth) dB"
            )
            #expect(abs(loud.difference - 10) <= 1)
            #expect(abs(quiet.difference - 10) <= 1)
            // The depth the two loudnesses ask for: about −12.9 and −0.9 dB.
            let voiceLoudness = KWeighting.stereoSineLoudness(level: overlayLevel, frequency: overlayTone)
            let movieLoudness = KWeighting.stereoSineLoudness(level: mainLevel, frequency: mainTone)
            #expect(abs(loud.depth - (voiceLoudness - 10 - movieLoudness)) <= 1)
            #expect(abs(quiet.depth - (voiceLoudness - 10 - movieLoudness + 12)) <= 1)
            // The engine reported the depth as it moved, and the snapshot holds the last report.
            let reported = await rig.wait {
                if case .loudnessDuckChanged(_, let reading?) = $0 { reading.depth < -12 } else { false }
            }
            #expect(reported != nil, "no loudnessDuckChanged event with the depth")
            let snapshot = try #require(rig.session.snapshot.loudnessDuck)
            #expect(abs(Double(snapshot.depth) - quiet.depth) <= 1.5, "\(snapshot)")
            duck.release()
            main.close()
            farEnd.close()
        }
    }
}
