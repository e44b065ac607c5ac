import Foundation
import SharedSession
import SharedSessionRecording
import SharedSessionTesting
import Testing

/// A session with a loudness duck, recorded and replayed: the style, the policy and the depth reports
/// travel in the file, and the replay renders the ducked movie sample for sample.
@Suite("Loudness ducks, recorded and replayed")
struct LoudnessReplayTests {
    /// A far end that talks in bursts: 1 s of a 300 Hz tone at −12 dBFS, 0.4 s of silence.
    static func farEnd() throws -> PCMBufferSource {
        let samples = (0..<(48_000 * 14 / 10)).flatMap { frame -> [Float] in
            let value = frame < 48_000 ? Float(0.25 * sin(2 * Double.pi * 300 * Double(frame) / 48_000)) : 0
            return [value, value]
        }
        return try PCMBufferSource(samples: samples, loops: true)
    }

    @Test(
        "the style, the policy and the depth reports are in the recording, and the replay renders the movie sample for sample"
    )
    func replaysSampleExact() throws {
        let loudness = try LoudnessDuckPolicy(margin: 12, deepest: -24, lighteningRate: 4)
        let run = try RecordedRun(policy: try SessionPolicy(loudnessDuck: loudness))
        let session = run.session
        let far = try session.openStream(
            StreamDescriptor(name: "far end", role: .communication), source: try Self.farEnd(), owner: "party")
        session.play()
        try run.render(500)
        let duck = try session.duck(DuckRequest(owner: "party", style: .followLoudness(far.id, margin: nil)))
        try run.render(4000)
        duck.release()
        try run.render(2000)
        let recording = try run.finish()
        #expect(recording.policy.loudnessDuck == loudness)

        let recordedReadings = recording.inputs.compactMap { input -> LoudnessDuckReading?? in
            if case .input(let recorded) = input.content,
                case .engine(.loudnessDuckChanged(_, let reading)) = recorded.request
            {
                reading
            } else {
                nil
            }
        }
        let depths = recordedReadings.compactMap { $0?.depth }
        #expect(depths.count >= 5, "the depth was reported as it moved: \(depths)")
        #expect((depths.min() ?? 0) < -10, "the movie was ducked by loudness: \(depths)")
        #expect(recordedReadings.last == .some(nil), "the release was reported: no loudness duck")

        var replayer = SessionReplayer(recording)
        replayer.source = { descriptor in
            descriptor.role == .movie ? RecordedRun.mainSource() as any AudioSource : try! Self.farEnd()
        }
        let result = try replayer.run()
        #expect(result.matched, "\(result.mismatches)")
        let replayed = try result.rendered.stem(result.mainStreams[0])
        #expect(replayed.count == run.mainStem.count)
        let largest = zip(replayed, run.mainStem).map { abs($0 - $1) }.max() ?? 1
        print("[measure] loudness duck replay: largest difference \(largest) over \(replayed.count / 2) frames")
        #expect(largest < 1e-6)
        let replayedDuck = result.events.compactMap { event -> DuckStyle? in
            if case .duckAcquired(let info) = event.kind { info.style } else { nil }
        }
        #expect(replayedDuck == [.followLoudness(far.id, margin: nil)])
    }
}
