import Foundation

/// A scene file that cannot be played: where, which field, what was expected and what was found.
public struct SceneError: Error, Sendable, CustomStringConvertible {
    /// The scene file.
    public let file: String
    /// The line the problem is on, from 1; 0 when the file could not be read.
    public let line: Int
    /// The column, from 1.
    public let column: Int
    /// The field, as a path from the top: `timeline[3].at`; empty for a syntax error outside any field.
    public let field: String
    /// What the field should hold.
    public let expected: String
    /// What it held.
    public let found: String

    /// One line a person can act on: `default.json:12:9: timeline[3].at: expected …, found …`.
    public var description: String {
        (line > 0 ? "\(file):\(line):\(column): " : "\(file): ") + (field.isEmpty ? "" : "\(field): ")
            + "expected \(expected), found \(found)"
    }
}

extension Scene {
    /// Reads a scene file. Media paths are resolved against the file's folder.
    ///
    /// - Throws: ``SceneError`` naming the line, the field and what was expected, for a file that
    ///   cannot be read, is not JSON, or does not describe a scene that can be played.
    public static func load(path: String) throws(SceneError) -> Scene {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SceneError(
                file: path, line: 0, column: 0, field: "", expected: "a readable UTF-8 scene file",
                found: "\(error.localizedDescription)")
        }
        return try parse(text, path: path)
    }

    /// Reads a scene from its text; `path` names it in errors and locates its media.
    public static func parse(_ text: String, path: String) throws(SceneError) -> Scene {
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw SceneError(
                file: path, line: error.position.line, column: error.position.column, field: "",
                expected: error.expected, found: error.found)
        }
        let folder = (path as NSString).deletingLastPathComponent
        var reader = SceneReader(file: path, folder: folder)
        return try reader.scene(root)
    }
}

/// Turns a parsed scene file into a ``Scene``, checking every field and the story's order (a clip
/// cannot stop before it started).
private struct SceneReader {
    let file: String
    let folder: String

    /// An object being read: its members by key, and which were read, so unknown keys are found.
    struct Object {
        let node: JSONNode
        let path: String
        let members: [JSONNode.Member]

        func member(_ key: String) -> JSONNode.Member? { members.first { $0.key == key } }
        func field(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
    }

    func fail(_ node: JSONNode, _ field: String, expected: String) -> SceneError {
        SceneError(
            file: file, line: node.position.line, column: node.position.column, field: field, expected: expected,
            found: node.kindDescription)
    }

    func object(_ node: JSONNode, path: String, allowed: [String]) throws(SceneError) -> Object {
        guard case .object(let members) = node.value else {
            throw fail(node, path.isEmpty ? "(top level)" : path, expected: "an object")
        }
        var seen: Set<String> = []
        for member in members {
            let field = path.isEmpty ? member.key : "\(path).\(member.key)"
            guard allowed.contains(member.key) else {
                throw SceneError(
                    file: file, line: member.keyPosition.line, column: member.keyPosition.column, field: field,
                    expected: "one of the fields " + allowed.map { "\"\($0)\"" }.joined(separator: ", "),
                    found: "the unknown field \"\(member.key)\"")
            }
            guard seen.insert(member.key).inserted else {
                throw SceneError(
                    file: file, line: member.keyPosition.line, column: member.keyPosition.column, field: field,
                    expected: "each field once", found: "\"\(member.key)\" a second time")
            }
        }
        return Object(node: node, path: path, members: members)
    }

    func required(_ object: Object, _ key: String, what: String) throws(SceneError) -> JSONNode {
        guard let member = object.member(key) else {
            throw SceneError(
                file: file, line: object.node.position.line, column: object.node.position.column,
                field: object.field(key), expected: what, found: "no \"\(key)\" field in this object")
        }
        return member.value
    }

    func number(
        _ node: JSONNode, _ field: String, in range: ClosedRange<Double>, what: String
    ) throws(SceneError) -> Double {
        guard case .number(let value) = node.value, range.contains(value) else {
            throw fail(node, field, expected: what)
        }
        return value
    }

    func string(_ node: JSONNode, _ field: String, what: String) throws(SceneError) -> String {
        guard case .string(let value) = node.value, !value.isEmpty else { throw fail(node, field, expected: what) }
        return value
    }

    func bool(_ node: JSONNode, _ field: String) throws(SceneError) -> Bool {
        guard case .bool(let value) = node.value else { throw fail(node, field, expected: "true or false") }
        return value
    }

    func integer(_ node: JSONNode, _ field: String, in range: ClosedRange<Int>, what: String) throws(SceneError)
        -> Int
    {
        guard case .number(let value) = node.value, value == value.rounded(), range.contains(Int(exactly: value) ?? -1)
        else { throw fail(node, field, expected: what) }
        return Int(value)
    }

    mutating func scene(_ root: JSONNode) throws(SceneError) -> Scene {
        let top = try object(
            root, path: "", allowed: ["title", "duration", "quantum", "lockedQuantum", "movie", "timeline"])
        let title = try string(try required(top, "title", what: "a title string"), "title", what: "a title string")
        let duration = try number(
            try required(top, "duration", what: "the scene's length in seconds"), "duration", in: 0.1...600,
            what: "the scene's length in seconds, 0.1 to 600")
        let quantumWhat = "a render quantum in frames, 1 to 8192"
        let quantum =
            try top.member("quantum").map { member throws(SceneError) in
                try integer(member.value, "quantum", in: 1...8192, what: quantumWhat)
            } ?? 1024
        let lockedQuantum =
            try top.member("lockedQuantum").map { member throws(SceneError) in
                try integer(member.value, "lockedQuantum", in: 1...8192, what: quantumWhat)
            } ?? 4096
        let movieNode = try required(top, "movie", what: "the movie: an object with a \"file\"")
        let movie = try media(movieNode, path: "movie", extra: ["player", "latency"])
        let moviePlayer = try moviePlayer(movieNode)
        let movieLatency = try self.movieLatency(movieNode)
        let timelineNode = try required(top, "timeline", what: "the timeline: an array of cues")
        guard case .array(let entries) = timelineNode.value else {
            throw fail(timelineNode, "timeline", expected: "an array of cues")
        }
        var story = Story()
        var cues: [Scene.Cue] = []
        for (index, entry) in entries.enumerated() {
            let cue = try self.cue(entry, path: "timeline[\(index)]", duration: duration, after: cues.last?.time ?? 0)
            try story.apply(cue, reader: self, node: entry, path: "timeline[\(index)]")
            cues.append(cue)
        }
        return Scene(
            title: title, duration: duration, quantum: quantum, lockedQuantum: lockedQuantum, movie: movie,
            moviePlayer: moviePlayer, movieLatency: movieLatency, cues: cues, path: file)
    }

    /// The movie's `latency`: seconds from 0 through 2 of a route that declares it, or nil.
    func movieLatency(_ node: JSONNode) throws(SceneError) -> Double? {
        let fields = try object(node, path: "movie", allowed: ["file", "volume", "partials", "player", "latency"])
        guard let member = fields.member("latency") else { return nil }
        return try number(
            member.value, fields.field("latency"), in: 0...2,
            what: "the latency of the movie's route in seconds, from 0 through 2 (Bluetooth headphones: about 0.2)")
    }

    /// The movie's `player`: "sharedsession" (the default) or "gstreamer".
    func moviePlayer(_ node: JSONNode) throws(SceneError) -> Scene.MoviePlayer {
        let fields = try object(node, path: "movie", allowed: ["file", "volume", "partials", "player", "latency"])
        guard let member = fields.member("player") else { return .sharedSession }
        let what = "the movie's player: \"sharedsession\" or \"gstreamer\""
        let name = try string(member.value, fields.field("player"), what: what)
        guard let player = Scene.MoviePlayer(rawValue: name) else {
            throw fail(member.value, fields.field("player"), expected: what)
        }
        return player
    }

    func media(_ node: JSONNode, path: String, extra: [String]) throws(SceneError) -> Scene.Media {
        let fields = try object(node, path: path, allowed: ["file", "volume", "partials"] + extra)
        return try media(in: fields)
    }

    /// The media fields (`file`, `volume`, `partials`) of an object that may hold others too.
    func media(in fields: Object) throws(SceneError) -> Scene.Media {
        let fileNode = try required(fields, "file", what: "a media file path, relative to the scene file")
        let written = try string(
            fileNode, fields.field("file"), what: "a media file path, relative to the scene file")
        let volume =
            try fields.member("volume").map { member throws(SceneError) in
                Float(try number(member.value, fields.field("volume"), in: 0...1, what: "a volume from 0 to 1"))
            } ?? 1
        var partials: [Double] = []
        if let member = fields.member("partials") {
            let what = "an array of frequencies in hertz, above 0 and below 24000"
            guard case .array(let elements) = member.value.value else {
                throw fail(member.value, fields.field("partials"), expected: what)
            }
            for (index, element) in elements.enumerated() {
                partials.append(
                    try number(element, fields.field("partials") + "[\(index)]", in: 1...23_999, what: what))
            }
        }
        let path = written.hasPrefix("/") ? written : (folder as NSString).appendingPathComponent(written)
        return Scene.Media(
            path: path, written: written, volume: volume, partials: partials, line: fileNode.position.line)
    }

    static let actions: [String: [String]] = [
        "play": [], "pause": [], "volume": ["value"], "seek": ["to"],
        "feed-start": ["file", "volume", "partials", "duck"], "feed-stop": [],
        "voice-join": ["file", "volume", "partials", "process", "duck", "margin"], "voice-leave": [], "voice-crash": [],
        "notification": ["file", "volume", "partials", "duck"],
        "other-audio-start": [], "other-audio-stop": [], "background": [], "foreground": [],
        "lock": [], "unlock": [], "interruption-begin": [], "interruption-end": ["shouldResume"],
        "route-change": ["reason", "output"],
    ]

    static let routeReasons = [
        "newDeviceAvailable", "oldDeviceUnavailable", "categoryChange", "override", "routeConfigurationChange",
        "noSuitableRoute",
    ]

    func cue(_ node: JSONNode, path: String, duration: Double, after previous: Double) throws(SceneError)
        -> Scene.Cue
    {
        guard case .object(let members) = node.value else {
            throw fail(node, path, expected: "a cue: an object with \"at\" and \"do\" or \"mark\"")
        }
        let isMark = members.contains { $0.key == "mark" }
        let base = Object(node: node, path: path, members: members)
        let time = try number(
            try required(base, "at", what: "the cue's time in seconds"), base.field("at"), in: previous...duration,
            what:
                "a time in seconds from \(JSONNode.format(previous)) (the cue before) to \(JSONNode.format(duration)) "
                + "(the scene's duration)")
        if isMark {
            let fields = try object(node, path: path, allowed: ["at", "mark", "expect"])
            let label = try string(
                try required(fields, "mark", what: "the mark's label"), fields.field("mark"), what: "a label string")
            var expect: [String: Double?] = [:]
            if let member = fields.member("expect") {
                let levels = try object(member.value, path: fields.field("expect"), allowed: Scene.streamNames)
                for level in levels.members {
                    if case .null = level.value.value {
                        expect[level.key] = .some(nil)
                    } else {
                        expect[level.key] = try number(
                            level.value, levels.field(level.key), in: -200...0,
                            what: "a level in dBFS (-200 to 0), or null for silence")
                    }
                }
            }
            return Scene.Cue(time: time, action: .mark(label: label, expect: expect), line: node.position.line)
        }
        let doNode = try required(
            base, "do", what: "what happens: \"do\" (an action) or \"mark\" (a point where levels are read)")
        let actionWhat = "one of the actions " + Self.actions.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
        guard case .string(let name) = doNode.value, let extra = Self.actions[name] else {
            throw fail(doNode, base.field("do"), expected: actionWhat)
        }
        let fields = try object(node, path: path, allowed: ["at", "do"] + extra)
        let action: Scene.Action
        switch name {
        case "play": action = .play
        case "pause": action = .pause
        case "volume":
            action = .volume(
                Float(
                    try number(
                        try required(fields, "value", what: "the host's volume from 0 to 1"), fields.field("value"),
                        in: 0...1, what: "the host's volume from 0 to 1")))
        case "seek":
            action = .seek(
                try number(
                    try required(fields, "to", what: "a time in seconds of the movie file"), fields.field("to"),
                    in: 0...86_400, what: "a time in seconds of the movie file, 0 or more"))
        case "feed-start":
            let duck =
                try fields.member("duck").map { member throws(SceneError) in
                    try bool(member.value, fields.field("duck"))
                } ?? true
            action = .feedStart(try media(in: fields), duck: duck)
        case "feed-stop": action = .feedStop
        case "voice-join":
            let process =
                try fields.member("process").map { member throws(SceneError) in
                    try bool(member.value, fields.field("process"))
                } ?? false
            let duck: Scene.VoiceDuck
            switch try fields.member("duck").map({ member throws(SceneError) in
                try string(member.value, fields.field("duck"), what: "\"level\" or \"loudness\"")
            }) ?? "level" {
            case "level": duck = .level
            case "loudness":
                let margin = try fields.member("margin").map { member throws(SceneError) in
                    Float(
                        try number(
                            member.value, fields.field("margin"), in: 0...40,
                            what: "the LU the voice is kept above the movie, 0 to 40"))
                }
                duck = .loudness(margin: margin)
            default:
                throw fail(
                    try required(fields, "duck", what: "\"level\" or \"loudness\""), fields.field("duck"),
                    expected: "\"level\" or \"loudness\"")
            }
            if process, duck != .level {
                throw fail(
                    try required(fields, "duck", what: "\"level\""), fields.field("duck"),
                    expected: "\"level\": a voice chat in a helper process ducks through the SDK's delegate, "
                        + "which has no loudness duck")
            }
            action = .voiceJoin(try media(in: fields), helperProcess: process, duck: duck)
        case "voice-leave": action = .voiceLeave
        case "voice-crash": action = .voiceCrash
        case "notification":
            let duck =
                try fields.member("duck").map { member throws(SceneError) in
                    try bool(member.value, fields.field("duck"))
                } ?? false
            action = .notification(try media(in: fields), duck: duck)
        case "other-audio-start": action = .otherAudio(playing: true)
        case "other-audio-stop": action = .otherAudio(playing: false)
        case "background": action = .background
        case "foreground": action = .foreground
        case "lock": action = .lock
        case "unlock": action = .unlock
        case "interruption-begin": action = .interruptionBegin
        case "interruption-end":
            let resume = try bool(
                try required(fields, "shouldResume", what: "true or false: whether playback resumes"),
                fields.field("shouldResume"))
            action = .interruptionEnd(shouldResume: resume)
        default:
            let reasonWhat = "one of " + Self.routeReasons.map { "\"\($0)\"" }.joined(separator: ", ")
            let reasonNode = try required(fields, "reason", what: reasonWhat)
            guard case .string(let reason) = reasonNode.value, Self.routeReasons.contains(reason) else {
                throw fail(reasonNode, fields.field("reason"), expected: reasonWhat)
            }
            let output = try fields.member("output").map { member throws(SceneError) in
                try string(member.value, fields.field("output"), what: "the new output's name")
            }
            action = .routeChange(reason: reason, output: output)
        }
        return Scene.Cue(time: time, action: action, line: node.position.line)
    }
}

/// What the story has reached at each cue, so a cue that makes no sense there (a second voice chat,
/// unlocking an unlocked screen) is refused at its line rather than failing halfway through a run.
private struct Story {
    var feed = false
    var voice = false
    var voiceHelper = false
    var locked = false
    var interrupted = false
    var background = false
    var otherAudio = false

    mutating func apply(_ cue: Scene.Cue, reader: SceneReader, node: JSONNode, path: String) throws(SceneError) {
        func check(_ allowed: Bool, _ expected: String) throws(SceneError) {
            guard allowed else {
                var doNode = node
                if case .object(let members) = node.value, let member = members.first(where: { $0.key == "do" }) {
                    doNode = member.value
                }
                throw reader.fail(doNode, path + ".do", expected: expected)
            }
        }
        switch cue.action {
        case .feedStart:
            try check(!feed, "no \"feed-start\" while a feed clip plays (\"feed-stop\" it first)")
            feed = true
        case .feedStop:
            try check(feed, "\"feed-stop\" only while a feed clip plays (\"feed-start\" first)")
            feed = false
        case .voiceJoin(_, let helper, _):
            try check(!voice, "no \"voice-join\" while the voice chat is on (\"voice-leave\" first)")
            voice = true
            voiceHelper = helper
        case .voiceLeave:
            try check(voice, "\"voice-leave\" only while the voice chat is on (\"voice-join\" first)")
            voice = false
        case .voiceCrash:
            try check(
                voice && voiceHelper,
                "\"voice-crash\" only while a voice chat that joined with \"process\": true is on")
            voice = false
        case .lock:
            try check(!locked, "no \"lock\" while the screen is locked (\"unlock\" first)")
            locked = true
        case .unlock:
            try check(locked, "\"unlock\" only while the screen is locked (\"lock\" first)")
            locked = false
        case .interruptionBegin:
            try check(!interrupted, "no \"interruption-begin\" during an interruption (\"interruption-end\" first)")
            interrupted = true
        case .interruptionEnd:
            try check(interrupted, "\"interruption-end\" only during an interruption (\"interruption-begin\" first)")
            interrupted = false
        case .background:
            try check(!background, "no \"background\" while in the background (\"foreground\" first)")
            background = true
        case .foreground:
            try check(background, "\"foreground\" only while in the background (\"background\" first)")
            background = false
        case .otherAudio(let playing):
            try check(
                otherAudio != playing,
                playing
                    ? "no \"other-audio-start\" while another app plays (\"other-audio-stop\" first)"
                    : "\"other-audio-stop\" only while another app plays (\"other-audio-start\" first)")
            otherAudio = playing
        default:
            break
        }
    }
}
