import SharedSession

/// The scene on the offline engine: time only moves when the scene renders, so every run produces
/// the same audio and the same timeline, and each stream's stem can be measured on its own.
final class OfflinePlayback: ScenePlayback {
    private let offline: OfflineEngine

    init() throws(SessionError) {
        offline = OfflineEngine(input: try Soundtrack.microphone())
    }

    var engine: any AudioEngine { offline }

    var now: Double { Double(offline.framesRendered) / Double(offline.format.sampleRate) }

    var summary: String { "the offline engine (\(offline.format))" }

    var levelsNote: String {
        "levels: RMS of the last 100 ms, dB re full scale; the movie at gain 1 reads -6.0 dBFS"
    }

    func begin() {
        offline.startRecording()
    }

    func play(quanta: Int, quantum: Int, mainStream: StreamID?, timeline: Timeline, drainInput: () -> Void) throws
        -> (main: Double?, mix: Double?)?
    {
        let format = offline.format
        var mainStem: [Float] = []
        var mix: [Float] = []
        for _ in 0..<quanta {
            let block = try offline.render(frames: quantum)
            mainStem.append(
                contentsOf: mainStream.flatMap { block.stems[$0] } ?? [Float](repeating: 0, count: block.mix.count))
            mix.append(contentsOf: block.mix)
            drainInput()
        }
        let mainLevel = LevelMeter.rmsDBFS(
            of: mainStem, lastMilliseconds: 100, sampleRate: format.sampleRate, channels: format.channels)
        let mixLevel = LevelMeter.rmsDBFS(
            of: mix, lastMilliseconds: 100, sampleRate: format.sampleRate, channels: format.channels)
        return (mainLevel, mixLevel)
    }

    func finish(timeline: Timeline) -> [Float] {
        offline.stopRecording()
    }

    func mainLevel(of reading: WatchPartyScene.Reading, in mix: [Float]) -> Double? {
        reading.mainLevel
    }
}
