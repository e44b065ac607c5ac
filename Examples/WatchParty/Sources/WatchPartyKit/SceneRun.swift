import Foundation
import SharedSession

/// What a run played and measured: the input of the plot and of the tests.
public struct SceneRun: Sendable {
    /// The scene that ran.
    public let scene: Scene
    /// What it played on.
    public let engine: String
    /// The mix, interleaved stereo at 48 kHz, from scene time 0.
    public let mix: [Float]
    /// Each stream's part of the mix as the engine rendered it (after its gain and ducks), by name,
    /// interleaved like the mix.
    public let stems: [String: [Float]]
    /// Each stream's level over time, and the mix's.
    public let tracks: [LevelTrack]
    /// The cues as they took effect, for the time axis.
    public let markers: [Marker]
    /// Spans of time a state held (the screen locked, an interruption), for the plot's lanes.
    public let lanes: [Lane]
    /// The levels read at each mark.
    public let marks: [MarkReading]
    /// The session's events.
    let events: [EventLog.Entry]
    /// What each media file was and how its decoder kept up: ring size and underruns.
    public let decoding: [String]
    /// Underruns by stream name: render calls that found a decoder's ring short.
    public let underruns: [String: Int]
    /// The scene's length in seconds.
    public let duration: Double
    /// Wall-clock seconds the scene took to play (without opening the media).
    public let renderSeconds: Double

    /// A cue where it took effect.
    public struct Marker: Sendable {
        /// Scene seconds: the start of the quantum the cue took effect in.
        public let time: Double
        /// What happened.
        public let caption: String
        /// Whether it is a mark (a reading) rather than an action.
        public let isMark: Bool
    }

    /// A span of time something held.
    public struct Lane: Sendable {
        /// What held ("screen locked").
        public let name: String
        /// Spans in scene seconds.
        public let spans: [ClosedRange<Double>]
    }

    /// The levels read at a mark: the 100 ms before it.
    public struct MarkReading: Sendable {
        /// Scene seconds.
        public let time: Double
        /// The mark's label.
        public let label: String
        /// The line of the scene file it is on.
        public let line: Int
        /// What the scene expects, by stream name (nil: silence).
        public let expected: [String: Double?]
        /// What was measured, by stream name (nil: silence); streams that could not be measured are absent.
        public let measured: [String: Double?]
        /// Frames the recording lost around the mark (PipeWire on a loaded machine); 0 offline. A level
        /// off its expectation there says more about the recording than about the session.
        public let recordingGap: Int
    }
}

/// One stream's level over time.
public struct LevelTrack: Sendable {
    /// The stream's name ("movie", "feed", "voice", "notification"), or "mix".
    public let name: String
    /// Scene seconds and the level there in dBFS (nil: silence), evenly spaced.
    public let points: [(time: Double, level: Double?)]
    /// How each point was measured, for the plot's legend.
    public let method: String
}
