import Foundation

/// A watch-party scene read from a file: the movie, and a timeline of what happens when.
///
/// The file is JSON; `Examples/WatchParty/Scenes/default.json` is the one that ships, and the
/// README lists every field. Times are seconds of scene time from the movie's opening.
public struct Scene: Sendable {
    /// What the scene is called, for the live view and the plot's title.
    public let title: String
    /// How long the scene plays, in seconds.
    public let duration: Double
    /// The render quantum in frames while the screen is on.
    public let quantum: Int
    /// The render quantum while the screen is locked.
    public let lockedQuantum: Int
    /// The movie: the host's main stream.
    public let movie: Media
    /// What plays the movie: this process (a `MediaFileSource`), or a GStreamer pipeline in a process of
    /// its own whose PipeWire node the session adopts (`"player": "gstreamer"`, PipeWire only).
    public let moviePlayer: MoviePlayer
    /// The latency of the route the movie plays through, in seconds (`"latency"` in the movie, PipeWire
    /// only): the movie plays into a `DeclaredLatencySink` that delays it that much and declares it, as
    /// Bluetooth headphones do, so the live view's clock at the ear shows the picture held back by it.
    /// Nil: the movie plays to the default sink.
    public let movieLatency: Double?
    /// What happens, in time order.
    public let cues: [Cue]
    /// The file the scene was read from, for messages.
    public let path: String

    /// What plays the scene's movie.
    public enum MoviePlayer: String, Sendable, Hashable {
        /// The session's own main stream, decoded in this process (the default).
        case sharedSession = "sharedsession"
        /// `gst-launch-1.0 … ! pulsesink` in a process of its own, adopted by the session
        /// (`NodeAdoption`): ducks, volumes and pauses reach its node's `Props`.
        case gstreamer
    }

    /// A media file the scene plays.
    public struct Media: Sendable, Hashable {
        /// The file, resolved against the scene file's folder.
        public let path: String
        /// The file as the scene wrote it.
        public let written: String
        /// The stream's volume (0 to 1).
        public let volume: Float
        /// The frequencies in hertz of the sine partials the file is made of, if it is made of some: a meter
        /// reads the stream out of a mix by them (on PipeWire, where only the mix is recorded).
        public let partials: [Double]
        /// Where the file was named in the scene, for errors found when it is opened.
        public let line: Int
    }

    /// One entry of the timeline.
    public struct Cue: Sendable {
        /// When, in seconds of scene time.
        public let time: Double
        /// What happens.
        public let action: Action
        /// The line of the scene file the entry starts on.
        public let line: Int
    }

    /// What a cue does. Each names who does it in the story: the host player, an SDK, or the system.
    public enum Action: Sendable {
        /// Host: play the movie.
        case play
        /// Host: pause the movie.
        case pause
        /// Host: set the movie's volume (0 to 1); ducks multiply it.
        case volume(Float)
        /// Host: seek the movie to a time in seconds of the file.
        case seek(Double)
        /// Social-feed SDK: a clip starts, holding a generic session and, with `duck`, a duck.
        case feedStart(Media, duck: Bool)
        /// Social-feed SDK: the clip ends; its duck and session are given back.
        case feedStop
        /// Watch-party SDK: the voice chat joins: a voice session, a duck and the far end's voice. With
        /// `helperProcess`, the SDK runs in a helper process of its own and reaches the session through
        /// SharedSessionRemote. `duck` says how the movie is ducked under the voice.
        case voiceJoin(Media, helperProcess: Bool, duck: VoiceDuck)
        /// Watch-party SDK: its helper process is killed (SIGKILL) mid-call; the host gives back what it
        /// held when its connection closes.
        case voiceCrash
        /// Watch-party SDK: the voice chat leaves.
        case voiceLeave
        /// A notification sound plays once, optionally ducking the movie while it sounds.
        case notification(Media, duck: Bool)
        /// System: another app starts or stops playing audio.
        case otherAudio(playing: Bool)
        /// System: the app goes to the background.
        case background
        /// System: the app comes to the foreground.
        case foreground
        /// System: the screen locks: the platform raises the render quantum.
        case lock
        /// System: the screen unlocks: the quantum comes back.
        case unlock
        /// System: an interruption (a phone call) begins.
        case interruptionBegin
        /// System: the interruption ends, with or without `shouldResume`.
        case interruptionEnd(shouldResume: Bool)
        /// System: the audio route changes.
        case routeChange(reason: String, output: String?)
        /// A point where the levels are read: by stream name ("movie", "feed", "voice",
        /// "notification", "mix"), the level expected there in dBFS, or `nil` for silence.
        case mark(label: String, expect: [String: Double?])
    }

    /// How the watch-party ducks the movie under the far end's voice.
    public enum VoiceDuck: Sendable, Equatable {
        /// A fixed duck, the SDK's `requestAudioDucking()`: the policy's level (−20 dB).
        case level
        /// A loudness duck (`DuckStyle.followLoudness`): the voice kept `margin` LU (or the policy's
        /// 10) above the movie while it speaks.
        case loudness(margin: Float?)
    }

    /// The stream names a mark can expect levels of.
    public static let streamNames = ["movie", "feed", "voice", "notification", "mix"]

    /// The labelled marks, in time order.
    public var marks: [(time: Double, label: String, expect: [String: Double?], line: Int)] {
        cues.compactMap { cue in
            if case .mark(let label, let expect) = cue.action { (cue.time, label, expect, cue.line) } else { nil }
        }
    }

    /// Every media file the scene plays, the movie first.
    public var media: [Media] {
        var all = [movie]
        for cue in cues {
            switch cue.action {
            case .feedStart(let media, _), .voiceJoin(let media, _, _), .notification(let media, _): all.append(media)
            default: break
            }
        }
        return all
    }
}

extension Scene.Action {
    /// The name the scene file gives the action (its `do` value), or "mark".
    public var name: String {
        switch self {
        case .play: "play"
        case .pause: "pause"
        case .volume: "volume"
        case .seek: "seek"
        case .feedStart: "feed-start"
        case .feedStop: "feed-stop"
        case .voiceJoin: "voice-join"
        case .voiceLeave: "voice-leave"
        case .voiceCrash: "voice-crash"
        case .notification: "notification"
        case .otherAudio(let playing): playing ? "other-audio-start" : "other-audio-stop"
        case .background: "background"
        case .foreground: "foreground"
        case .lock: "lock"
        case .unlock: "unlock"
        case .interruptionBegin: "interruption-begin"
        case .interruptionEnd: "interruption-end"
        case .routeChange: "route-change"
        case .mark: "mark"
        }
    }

    /// A short label for the plot's time axis and the event log.
    public var caption: String {
        switch self {
        case .play: "host: play"
        case .pause: "host: pause"
        case .volume(let volume): "host: volume \(Scene.format(volume))"
        case .seek(let time): "host: seek to \(Scene.format(Float(time))) s"
        case .feedStart(_, let duck): duck ? "feed clip + duck" : "feed clip"
        case .feedStop: "feed clip ends"
        case .voiceJoin(_, let helper, let duck):
            (helper ? "voice chat joins (helper process)" : "voice chat joins")
                + (duck == .level ? "" : " (loudness duck)")
        case .voiceLeave: "voice chat leaves"
        case .voiceCrash: "voice helper killed"
        case .notification: "notification"
        case .otherAudio(let playing): playing ? "other app plays" : "other app stops"
        case .background: "background"
        case .foreground: "foreground"
        case .lock: "screen locked"
        case .unlock: "screen unlocked"
        case .interruptionBegin: "interruption"
        case .interruptionEnd(let resume): resume ? "interruption ends (resume)" : "interruption ends"
        case .routeChange(let reason, _): "route: \(reason)"
        case .mark(let label, _): label
        }
    }
}

extension Scene {
    static func format(_ value: Float) -> String {
        String(format: "%g", Double(value))
    }
}
