import Foundation
import SharedSession
@_spi(Testing) import SharedSessionPipeWire
import SharedSessionTesting
import Testing

extension DaemonTests {
    @Suite("Voice-activity ducking on PipeWire")
    struct VoiceActivityTests {
        /// Stereo frames of a 3 kHz tone at 0.25 in bursts: (milliseconds, speaking).
        static func bursts(_ segments: [(Int, Bool)]) -> [Float] {
            var samples: [Float] = []
            var frame = 0
            for (milliseconds, speaking) in segments {
                for _ in 0..<(milliseconds * 48) {
                    let value = speaking ? Float(0.25 * sin(2 * Double.pi * overlayTone * Double(frame) / 48_000)) : 0
                    samples += [value, value]
                    frame += 1
                }
            }
            return samples
        }

        @Test(
            "daemon: the movie ducks while the far end speaks, within the attack plus one quantum, holds through a short gap and comes back in a long one (sink monitor)"
        )
        func followsTheFarEnd() async throws {
            let rig = try SessionRig()
            defer { rig.stop() }
            _ = try rig.openMain()
            try await rig.recorder.waitForTone(mainTone, atLeast: mainLevel - 1)
            // 600 ms silence, speech 600, gap 150 (shorter than the 1.2 s hold), speech 600, gap 2400 (longer
            // than the hold and the 400 ms release).
            let farEnd = try rig.session.openStream(
                StreamDescriptor(name: "far end", role: .communication),
                source: try PCMBufferSource(
                    samples: Self.bursts([(600, false), (600, true), (150, false), (600, true), (2400, false)]),
                    loops: false),
                owner: "party")
            let duck = try rig.session.duck(
                DuckRequest(owner: "party", style: .followActivity(.stream(farEnd.id), level: nil)))
            let start = rig.recorder.mark()
            try await rig.recorder.record(for: .milliseconds(4800))
            let samples = rig.recorder.samples
            let end = samples.count / 2
            let quantum = Double(rig.engine.quantum) / 48

            // Read off the recording in 1 ms windows (48 frames: whole cycles of both tones, so neither
            // leaks into the other's reading): where the far end starts speaking, and where the movie is
            // 19 dB down.
            let speechHeard = try #require(
                try meter.firstWindowEnd(
                    samples, frequency: overlayTone, atOrAbove: overlayLevel - 1, window: 48, hop: 6,
                    frames: start..<end))
            let onset = speechHeard - 48
            let before = try rig.mainLevel(before: onset)
            let ducked = try #require(
                try meter.firstWindowEnd(
                    samples, frequency: mainTone, atOrBelow: before - 19, window: 48, hop: 6, frames: onset..<end))
            let latency = milliseconds(ducked - onset)
            let speaking = try meter.toneLevel(samples, frequency: mainTone, frames: window(onset + 48 * 200, 4800))
            let shortGap = try meter.toneLevel(samples, frequency: mainTone, frames: window(onset + 48 * 620, 4800))
            // The long gap's last 100 ms, 700 ms after the hold and the release end: the hold is counted in
            // the far end's rendered frames, and with two daemons' passes and a build beside them the movie
            // was seen still 0.9 dB down 200 ms after the release's end.
            let longGap = try meter.toneLevel(samples, frequency: mainTone, frames: window(onset + 48 * 3650, 4800))
            print(
                "[measure] voice-activity duck on PipeWire: main -19 dB \(latency) ms after the first syllable "
                    + "(attack 20 ms, quantum \(quantum) ms); speaking \(speaking - before) dB, in a 150 ms gap "
                    + "\(shortGap - before) dB, 2.3 s into a 2.4 s gap \(longGap - before) dB"
            )
            #expect(before > mainLevel - 0.5, "the movie plays at full level before anyone speaks")
            // The attack, at most one quantum until the main stream's next cycle hears the far end's
            // (the graph may run it first), and the 1 ms reading window with its 6-frame hop.
            #expect(latency <= 20 + quantum + 2)
            #expect(abs(speaking - before + 20) <= 0.1)
            #expect(abs(shortGap - before + 20) <= 0.1, "the hold keeps the duck through a short gap")
            #expect(abs(longGap - before) <= 0.1, "a long gap brings the movie back")
            duck.release()
            farEnd.close()
        }
    }
}
