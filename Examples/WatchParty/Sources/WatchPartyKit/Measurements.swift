import Foundation

/// Reads levels out of a finished run: each stream's own stem on the offline engine, or the mix
/// recorded from PipeWire with each stream picked out by its partials.
struct Measurements {
    let scene: Scene
    let playback: any ScenePlayback
    let mix: [Float]
    let stems: [String: [Float]]
    let rate = 48_000
    let channels = 2

    /// The lowest level read out of a mix by partials; anything under it counts as silence.
    static let partialsFloor = -60.0

    /// Frames in the 100 ms a mark reads.
    var markWindow: Int { rate / 10 }

    /// The partials of each stream name, from the media the scene gave them.
    var partials: [String: [Double]] {
        var partials: [String: [Double]] = ["movie": scene.movie.partials]
        for cue in scene.cues {
            switch cue.action {
            case .feedStart(let media, _): partials["feed"] = media.partials
            case .voiceJoin(let media, _, _): partials["voice"] = media.partials
            case .notification(let media, _): partials["notification"] = media.partials
            default: break
            }
        }
        return partials.filter { !$0.value.isEmpty }
    }

    var isOffline: Bool { playback is OfflinePlayback }

    /// The level of `name` over `frames` of scene time, or `.none` when it cannot be measured here.
    func level(of name: String, sceneFrames frames: Range<Int>) -> Double?? {
        if name == "mix" {
            let start = playback.mixFrame(ofSceneFrame: frames.lowerBound)
            return .some(Levels.rmsDBFS(of: mix, frames: start..<start + frames.count, channels: channels))
        }
        if isOffline {
            guard let stem = stems[name] else { return .some(nil) }
            return .some(Levels.rmsDBFS(of: stem, frames: frames, channels: channels))
        }
        guard let partials = partials[name] else { return .none }
        let end = playback.mixFrame(ofSceneFrame: frames.upperBound)
        let level = Levels.toneRMSDBFS(
            of: mix, frequencies: partials, endFrame: end, milliseconds: frames.count * 1000 / rate,
            sampleRate: rate, channels: channels)
        // The other streams leak into a partial's filter (the voice's syllables and the chime's decay
        // spread their energy; the codecs add noise): through the Hann window, the voice at -17 dBFS
        // reads at most -96.7 dBFS in the movie's partials. Below the floor a reading says nothing
        // about the stream.
        return .some(level.flatMap { $0 < Self.partialsFloor ? nil : $0 })
    }

    func marks(_ marks: [(time: Double, cue: Scene.Cue)]) -> [SceneRun.MarkReading] {
        marks.compactMap { mark in
            guard case .mark(let label, let expected) = mark.cue.action else { return nil }
            let end = Int((mark.time * Double(rate)).rounded())
            var measured: [String: Double?] = [:]
            for name in Set(Array(expected.keys) + Array(stems.keys) + ["mix"]) {
                if let level = level(of: name, sceneFrames: max(0, end - markWindow)..<end) {
                    measured[name] = level
                }
            }
            let gap = playback.recordingGap(inSceneFrames: max(0, end - markWindow)..<end)
            return SceneRun.MarkReading(
                time: mark.time, label: label, line: mark.cue.line, expected: expected, measured: measured,
                recordingGap: gap)
        }
    }

    /// Each stream's level over time: RMS over 100 ms every 10 ms from the stems offline; on PipeWire,
    /// the partials' RMS over 100 ms every 20 ms. 100 ms holds whole cycles of every partial at whole
    /// ten hertz, so a steady chord reads as a flat line; a 150 ms fade still shows as a slope.
    func tracks(labels: [String]) -> [LevelTrack] {
        let total = Int((scene.duration * Double(rate)).rounded())
        let (window, hop) = isOffline ? (rate / 10, rate / 100) : (rate / 10, rate / 50)
        let method =
            isOffline
            ? "RMS over 100 ms of each stream's stem" : "RMS over 100 ms of each stream's partials in the recorded mix"
        var tracks: [LevelTrack] = []
        for name in labels + ["mix"] {
            guard name == "mix" || isOffline || partials[name] != nil else { continue }
            // Offline, a running sum of squares makes each window's RMS two lookups.
            let energy = isOffline ? Self.cumulativeEnergy(name == "mix" ? mix : stems[name] ?? [], channels) : []
            var points: [(time: Double, level: Double?)] = []
            var end = hop
            while end <= total {
                let start = max(0, end - window)
                let level: Double?
                if isOffline {
                    let sum = max(0, energy[min(end, energy.count - 1)] - energy[min(start, energy.count - 1)])
                    let rms = (sum / Double((end - start) * channels)).squareRoot()
                    level = rms > 1e-6 ? 20 * log10(rms) : nil
                } else {
                    level = self.level(of: name, sceneFrames: start..<end) ?? nil
                }
                points.append((Double(end) / Double(rate), level))
                end += hop
            }
            tracks.append(LevelTrack(name: name, points: points, method: name == "mix" ? "RMS of the mix" : method))
        }
        return tracks
    }

    /// The sum of squares of `samples` over every frame before each frame index (`count + 1` entries).
    static func cumulativeEnergy(_ samples: [Float], _ channels: Int) -> [Double] {
        let frames = samples.count / channels
        var energy = [Double](repeating: 0, count: frames + 1)
        var sum: Double = 0
        for frame in 0..<frames {
            for channel in 0..<channels {
                let sample = Double(samples[frame * channels + channel])
                sum += sample * sample
            }
            energy[frame + 1] = sum
        }
        return energy
    }
}
