import Foundation
import Testing

@testable import WatchPartyKit

/// The scene file reader: the shipped scene reads, and every kind of mistake is reported at its
/// line with the field and what was expected.
@Suite struct SceneReaderTests {
    static let defaultScene = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scenes/default.json").path

    /// A scene with one line per cue: cue `n` of `cues` is on line 4 + n.
    static func scene(_ cues: [String], top: String = "") -> String {
        """
        {
            "title": "test", "duration": 10,\(top)
            "movie": { "file": "media/movie.mp4", "volume": 0.8 },
            "timeline": [
        """ + "\n" + cues.map { "        " + $0 }.joined(separator: ",\n") + "\n    ]\n}\n"
    }

    func error(_ text: String) -> SceneError? {
        do {
            _ = try Scene.parse(text, path: "test.json")
            return nil
        } catch {
            return error
        }
    }

    @Test func theDefaultSceneReads() throws {
        let scene = try Scene.load(path: Self.defaultScene)
        #expect(scene.title == "Movie night with friends")
        #expect(scene.duration == 20)
        #expect(scene.quantum == 1024 && scene.lockedQuantum == 4096)
        #expect(scene.movie.path.hasSuffix("Scenes/media/movie.mp4"))
        #expect(scene.movie.volume == 0.8)
        #expect(scene.movie.partials == [220, 330])
        let names = Set(scene.cues.map(\.action.name))
        // Every kind of action the scene format has is in the scene that ships.
        #expect(
            names == [
                "play", "pause", "volume", "seek", "feed-start", "feed-stop", "voice-join", "voice-leave",
                "notification",
                "other-audio-start", "other-audio-stop", "background", "foreground", "lock", "unlock",
                "interruption-begin", "interruption-end", "route-change", "mark",
            ])
        #expect(scene.marks.count == 14)
        #expect(scene.marks[0].expect["movie"] == .some(-13.98))
        #expect(scene.marks[7].expect["mix"] == .some(nil))
        #expect(scene.cues.first?.line == 8)
    }

    @Test func theGStreamerSceneReadsWithItsPlayerAndTheDefaultScenesMarks() throws {
        let gstreamer = try Scene.load(
            path: Self.defaultScene.replacingOccurrences(of: "default", with: "gstreamer-movie"))
        let scene = try Scene.load(path: Self.defaultScene)
        #expect(gstreamer.moviePlayer == .gstreamer)
        #expect(scene.moviePlayer == .sharedSession)
        #expect(gstreamer.marks.map(\.expect) == scene.marks.map(\.expect))
    }

    @Test func theBluetoothSceneReadsWithItsLatencyAndTheDefaultScenesMarks() throws {
        let bluetooth = try Scene.load(
            path: Self.defaultScene.replacingOccurrences(of: "default", with: "bluetooth-headphones"))
        let scene = try Scene.load(path: Self.defaultScene)
        #expect(bluetooth.movieLatency == 0.2)
        #expect(scene.movieLatency == nil)
        #expect(bluetooth.marks.map(\.expect) == scene.marks.map(\.expect))
    }

    @Test func aMovieLatencyOutsideZeroToTwoSecondsIsRefusedAtItsLine() throws {
        for bad in ["-0.1", "2.5", "\"long\""] {
            let text = Self.scene([#"{ "at": 0, "do": "play" }"#]).replacingOccurrences(
                of: #""volume": 0.8 }"#, with: #""volume": 0.8, "latency": "# + bad + " }")
            let error = try #require(self.error(text), "latency \(bad)")
            #expect(error.line == 3)
            #expect(error.field == "movie.latency")
            #expect(error.description.contains("from 0 through 2"))
        }
    }

    @Test func anUnknownMoviePlayerIsRefusedAtItsLine() throws {
        let text = Self.scene([#"{ "at": 0, "do": "play" }"#]).replacingOccurrences(
            of: #""volume": 0.8 }"#, with: #""volume": 0.8, "player": "vlc" }"#)
        let error = try #require(self.error(text))
        #expect(error.line == 3)
        #expect(error.field == "movie.player")
        #expect(error.description.contains("\"sharedsession\" or \"gstreamer\""))
    }

    @Test func aSyntaxErrorNamesItsLineAndColumn() throws {
        let text = Self.scene([#"{ "at": 0, "do": "play" }"#, #"{ "at": 1 "do": "pause" }"#])
        let error = try #require(self.error(text))
        #expect(error.line == 6)
        #expect(error.column == 19)
        #expect(error.field == "")
        #expect(error.expected == "',' or '}' after the value of \"at\"")
        #expect(error.description.hasPrefix("test.json:6:19: expected ',' or '}'"))
    }

    @Test func anUnterminatedStringIsFoundOnItsLine() throws {
        let error = try #require(
            self.error(Self.scene([#"{ "at": 0, "do": "play }"#, #"{ "at": 1, "do": "pause" }"#])))
        #expect(error.line == 5)
        #expect(error.expected.contains("closing '\"'"))
    }

    @Test func aWrongTypeNamesTheField() throws {
        let error = try #require(
            self.error(Self.scene([#"{ "at": 0, "do": "play" }"#, #"{ "at": "two", "do": "pause" }"#])))
        #expect(error.line == 6)
        #expect(error.field == "timeline[1].at")
        #expect(error.expected.hasPrefix("a time in seconds from 0 (the cue before) to 10"))
        #expect(error.found == "the string \"two\"")
    }

    @Test func cuesOutOfOrderAreRefused() throws {
        let error = try #require(
            self.error(Self.scene([#"{ "at": 3, "do": "play" }"#, #"{ "at": 2, "do": "pause" }"#])))
        #expect(error.line == 6)
        #expect(error.field == "timeline[1].at")
        #expect(error.found == "the number 2")
    }

    @Test func anUnknownActionListsTheKnownOnes() throws {
        let error = try #require(self.error(Self.scene([#"{ "at": 0, "do": "dance" }"#])))
        #expect(error.line == 5)
        #expect(error.field == "timeline[0].do")
        #expect(error.expected.contains("\"feed-start\""))
        #expect(error.found == "the string \"dance\"")
    }

    @Test func anUnknownFieldIsNamedWhereItIsWritten() throws {
        let error = try #require(
            self.error(Self.scene([#"{ "at": 0, "do": "play" }"#, #"{ "at": 1, "do": "volume", "valeu": 0.5 }"#])))
        #expect(error.line == 6)
        #expect(error.column == 36)
        #expect(error.field == "timeline[1].valeu")
        #expect(error.expected == #"one of the fields "at", "do", "value""#)
    }

    @Test func aMissingFieldNamesTheObjectItBelongsIn() throws {
        let error = try #require(self.error(Self.scene([#"{ "at": 0, "do": "feed-start", "duck": true }"#])))
        #expect(error.line == 5)
        #expect(error.field == "timeline[0].file")
        #expect(error.expected == "a media file path, relative to the scene file")
    }

    @Test func aValueOutOfRangeSaysTheRange() throws {
        let error = try #require(self.error(Self.scene([#"{ "at": 0, "do": "volume", "value": 1.5 }"#])))
        #expect(error.field == "timeline[0].value")
        #expect(error.expected == "the host's volume from 0 to 1")
        #expect(error.found == "the number 1.5")
        let quantum = try #require(self.error(Self.scene([#"{ "at": 0, "do": "play" }"#], top: #" "quantum": 10000,"#)))
        #expect(quantum.line == 2)
        #expect(quantum.field == "quantum")
        #expect(quantum.expected == "a render quantum in frames, 1 to 8192")
    }

    @Test func aCueThatMakesNoSenseThereIsRefused() throws {
        let error = try #require(
            self.error(Self.scene([#"{ "at": 0, "do": "play" }"#, #"{ "at": 1, "do": "feed-stop" }"#])))
        #expect(error.line == 6)
        #expect(error.field == "timeline[1].do")
        #expect(error.expected.contains("only while a feed clip plays"))
    }

    @Test func aMarkExpectsOnlyKnownStreams() throws {
        let error = try #require(
            self.error(Self.scene([#"{ "at": 1, "mark": "m", "expect": { "moive": -12 } }"#])))
        #expect(error.line == 5)
        #expect(error.field == "timeline[0].expect.moive")
        #expect(error.expected.contains("\"movie\""))
    }

    @Test func aMissingTopLevelFieldIsNamed() throws {
        let error = try #require(self.error(#"{ "title": "t", "duration": 5, "timeline": [] }"#))
        #expect(error.line == 1)
        #expect(error.field == "movie")
        #expect(error.found == "no \"movie\" field in this object")
        let notAnObject = try #require(self.error("[1, 2]"))
        #expect(notAnObject.expected == "an object")
    }

    @Test func aMissingFileIsASceneErrorToo() {
        #expect(throws: SceneError.self) { try Scene.load(path: "/nonexistent/scene.json") }
    }
}
