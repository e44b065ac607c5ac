import Foundation
import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting

/// A loudness duck on the offline engine driven as a user drives it: the host's volume turned, a fixed
/// duck taken and released at given times, with what is heard read off the rendered stems.
struct LoudnessDuckScene {
    static let rate = LoudnessDuckTests.rate

    /// What to do at a frame: set the host's volume, take or release a fixed duck, or take the
    /// loudness duck.
    enum Action {
        case volume(Float)
        /// A fixed duck of the host's, at `level` (the policy's duck level when nil).
        case takeFixedDuck(level: Float? = nil)
        case releaseFixedDuck
        case takeLoudnessDuck
        case releaseLoudnessDuck
    }

    struct Rendered {
        var main: [Float]
        var voice: [Float]
        var movie: [Float]
        /// Per quantum: its last frame, the main stream's reading then (`StreamHandle.loudnessDuck`).
        var readings: [(frame: Int, reading: LoudnessDuckReading?)]
        /// The depths the events reported, in order.
        var reported: [Float]
        var snapshot: SessionSnapshot
        /// Per event reported, the last frame of the quantum it came in.
        var reportedAt: [Int] = []
        /// Per quantum: its last frame, the snapshot's loudness-duck depth then.
        var snapshotDepths: [(frame: Int, depth: Float?)] = []
    }

    final class Events: SharedSessionDelegate, @unchecked Sendable {
        // @unchecked: the offline engine delivers every event on the thread that renders, the test's.
        var depths: [Float] = []
        func session(_ session: SharedSession, didEmit event: SessionEvent) {
            if case .loudnessDuckChanged(_, let reading) = event.kind { depths.append(reading?.depth ?? 0) }
        }
    }

    /// Renders `voice` over `movie` with a loudness duck at `margin` taken at the start (unless an action
    /// takes it later), doing `actions` at their frames, in 1024-frame quanta.
    static func render(
        movie: [Float], voice: [Float], margin: Float = 10, actions: [(frame: Int, action: Action)] = [],
        loudnessAtStart: Bool = true
    ) throws -> Rendered {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        let events = Events()
        session.delegate = events
        let main = try session.openMainStream(source: try PCMBufferSource(samples: movie, loops: false))
        let far = try session.openStream(
            StreamDescriptor(name: "far end", role: .communication),
            source: try PCMBufferSource(samples: voice, loops: false), owner: "watch-party")
        let request = DuckRequest(owner: "watch-party", style: .followLoudness(far.id, margin: margin))
        var loudness = loudnessAtStart ? try session.duck(request) : nil
        var fixed: DuckLease?
        var pending = actions.sorted { $0.frame < $1.frame }
        var rendered = Rendered(
            main: [], voice: [], movie: movie, readings: [], reported: [], snapshot: session.snapshot)
        let frames = min(movie.count, voice.count) / 2
        while rendered.main.count < frames * 2 {
            let at = rendered.main.count / 2
            while let next = pending.first, next.frame <= at {
                pending.removeFirst()
                switch next.action {
                case .volume(let volume): session.mainVolume = volume
                case .takeFixedDuck(let level):
                    fixed = try session.duck(DuckRequest(owner: "host-menu", style: .duck(level: level)))
                case .releaseFixedDuck:
                    fixed?.release()
                    fixed = nil
                case .takeLoudnessDuck: loudness = try session.duck(request)
                case .releaseLoudnessDuck:
                    loudness?.release()
                    loudness = nil
                }
            }
            let until = pending.first.map { min($0.frame, frames) } ?? frames
            let block = try engine.render(frames: min(1024, until - at))
            rendered.main += block.stems[main.id] ?? []
            rendered.voice += block.stems[far.id] ?? []
            let end = rendered.main.count / 2 - 1
            rendered.readings.append((end, main.loudnessDuck))
            rendered.reportedAt += Array(repeating: end, count: events.depths.count - rendered.reportedAt.count)
            rendered.snapshotDepths.append((end, session.snapshot.loudnessDuck?.depth))
        }
        rendered.snapshot = session.snapshot
        rendered.reported = events.depths
        withExtendedLifetime((loudness, fixed)) {}
        return rendered
    }

    // MARK: Material

    /// Speakers with natural pauses: turns in `voices`, 0.35 to 0.9 s apart, each at its own loudness
    /// (`levels`, LUFS, cycled), stereo, `seconds` long.
    static func talk(
        seconds: Double, voices: [Speech.Voice], levels: [Double] = [-23], lead: Double = 0
    ) throws -> [Float] {
        try turns(seconds: seconds, voices: voices, levels: levels, lead: lead).samples
    }

    /// ``talk(seconds:voices:levels:lead:)`` with each turn `sentences` of the speaker's sentence 0.4 s
    /// apart, and the frames each turn spans.
    static func turns(
        seconds: Double, voices: [Speech.Voice], levels: [Double] = [-23], lead: Double = 0, sentences: Int = 1
    ) throws -> (samples: [Float], turns: [Range<Int>]) {
        let pauses = [0.35, 0.9, 0.5, 0.7, 0.45]
        var stereo = [Float](repeating: 0, count: Int(lead * Double(rate)) * 2)
        var turns: [Range<Int>] = []
        var turn = 0
        let total = Int(seconds * Double(rate)) * 2
        while stereo.count < total {
            let voice = voices[turn % voices.count]
            let speech = try Speech.make(
                VoiceActivitySpeechTests.turn(for: voice), voice: voice,
                trimmedAt: VoiceActivityPolicy.default.linearThreshold)
            let scaled = try LoudnessDuckTests.scaled(speech, to: levels[turn % levels.count])
            let start = stereo.count / 2
            for sentence in 0..<max(1, sentences) {
                if sentence > 0 { stereo += [Float](repeating: 0, count: Int(0.4 * Double(rate)) * 2) }
                stereo += scaled
            }
            turns.append(start..<min(stereo.count, total) / 2)
            stereo += [Float](repeating: 0, count: Int(pauses[turn % pauses.count] * Double(rate)) * 2)
            turn += 1
        }
        return (Array(stereo.prefix(total)), turns)
    }

    /// A music-like movie: a chord of three partials and a bass, a kick every half second, a little
    /// noise; its level drifts by `drift` dB over `period` s. Stereo, scaled to `lufs` on average.
    static func chords(seconds: Int, lufs: Double, drift: Double = 0, period: Double = 9) throws -> [Float] {
        let mono = (0..<(seconds * rate)).map { frame -> Float in
            let time = Double(frame) / Double(rate)
            let chord = [220.0, 277.2, 329.6].reduce(0.0) { $0 + sin(2 * .pi * $1 * time) } / 3
            let bass = 0.8 * sin(2 * .pi * 55 * time)
            let beat = time.truncatingRemainder(dividingBy: 0.5)
            let kick = beat < 0.12 ? sin(2 * .pi * 60 * beat) * exp(-beat * 30) : 0
            let noise = 0.05 * sin(Double(frame &* 7919 % 104_729))
            let level = pow(10, drift * sin(2 * .pi * time / period) / 20)
            return Float((chord + bass + kick + noise) * level)
        }
        return try LoudnessDuckTests.scaled(mono, to: lufs)
    }

    // MARK: Measuring

    /// The depth in 10 ms blocks, dB: the main stem over the movie.
    static func blocks(_ rendered: Rendered) -> [Double] {
        LoudnessDuckTests.blockDepths(main: rendered.main, movie: rendered.movie)
    }

    /// The depth applied at the last frame of `frames` where the movie is loud enough to tell (the
    /// main stem's sample over the movie's), in dB.
    static func appliedDepth(_ rendered: Rendered, endingAt frame: Int) -> Double? {
        for index in stride(from: frame, through: max(0, frame - 64), by: -1) {
            let source = Double(rendered.movie[index * 2])
            if abs(source) > 1e-3 { return 20 * log10(max(1e-9, Double(rendered.main[index * 2]) / source)) }
        }
        return nil
    }

    /// Voice − movie as heard by FFmpeg's meter over 3 s windows every second in `seconds`, LU.
    static func differences(_ rendered: Rendered, seconds: Range<Int>) throws -> [Double] {
        try differences(
            rendered,
            windows: stride(from: seconds.lowerBound, through: seconds.upperBound - 3, by: 1).map {
                ($0 * rate)..<(($0 + 3) * rate)
            })
    }

    /// Voice − movie as heard by FFmpeg's meter over each of `windows` (frames), LU.
    static func differences(_ rendered: Rendered, windows: [Range<Int>]) throws -> [Double] {
        let voice = try LoudnessDuckTests.ffmpegLoudness(rendered.voice, windows: windows)
        let main = try LoudnessDuckTests.ffmpegLoudness(rendered.main, windows: windows)
        return zip(voice, main).map { $0 - $1 }
    }

    /// The median and the 5th and 95th percentiles of `values`.
    static func spread(_ values: [Double]) -> (median: Double, low: Double, high: Double) {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return (.nan, .nan, .nan) }
        func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int(fraction * Double(sorted.count)))] }
        return (at(0.5), at(0.05), at(0.95))
    }
}
