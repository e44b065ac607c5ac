import SharedSession

/// The scene on the offline engine: time only moves when the scene renders, so every run produces
/// the same audio, as fast as the machine can mix it, and each stream's stem can be measured on its own.
final class OfflinePlayback: ScenePlayback {
    private let offline: OfflineEngine

    /// The engine, with a 300 Hz tone as the "microphone" the voice chat captures.
    init() throws(SessionError) {
        offline = OfflineEngine(input: try SineSource(frequency: 300, amplitude: 0.2))
    }

    var engine: any AudioEngine { offline }

    var now: Double { Double(offline.framesRendered) / Double(offline.format.sampleRate) }

    var summary: String { "the offline engine (\(offline.format))" }

    func begin() {
        offline.startRecording()
    }

    func play(quanta: Int, quantum: Int, quantumDone: (RenderedAudio?) -> Void) throws {
        for _ in 0..<quanta {
            quantumDone(try offline.render(frames: quantum))
        }
    }

    func finish(log: (String) -> Void) -> [Float] {
        offline.stopRecording()
    }

    func mixFrame(ofSceneFrame frame: Int) -> Int { frame }

    func recordingGap(inSceneFrames frames: Range<Int>) -> Int { 0 }
}
