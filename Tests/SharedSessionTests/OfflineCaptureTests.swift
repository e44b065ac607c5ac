import SharedSession
import SharedSessionTestSupport
import Testing

/// What the offline engine's voice capture is: its input, unchanged, whatever the configuration's mode.
@Suite("Offline engine: the voice capture")
struct OfflineCaptureTests {
    @Test("a voiceChat session's capture on the offline engine is its input sample for sample: no voice processing")
    func captureIsTheInputUnprocessed() throws {
        var noise = SeededNoise(seed: 3)
        let input = (0..<4800).flatMap { _ -> [Float] in
            let value = noise.next() * 0.5
            return [value, -value]
        }
        let engine = OfflineEngine(input: try PCMBufferSource(samples: input, loops: false))
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(source: try PCMBufferSource(samples: [0.5, 0.5], loops: true))
        defer { main.close() }
        let voice = try session.acquire(.voice, owner: "watch-party")
        defer { voice.release() }
        #expect(session.snapshot.activeConfiguration?.mode.usesVoiceProcessing == true)
        _ = try engine.render(frames: 4800)
        let captured = session.voiceInput.readAll()
        #expect(captured == input, "the capture differs from the input: the offline engine processed it")
    }
}
