import Foundation
import Logging
import SharedSession
import Testing

@testable import WatchPartyKit

/// The shipped scene end to end on the offline engine: its media made and decoded, every cue played
/// through the session, the levels at its marks as the scene file says, and the picture written.
@Suite struct DefaultSceneTests {
    @Test func theDefaultScenePlaysAndItsMarksMatchTheFile() throws {
        let scene = try Scene.load(path: SceneReaderTests.defaultScene)
        let run = try SceneRunner(
            scene: scene, engine: .offline, view: LiveView(style: .quiet), logger: Logger(label: "test")
        ).run()

        #expect(run.marks.count == scene.marks.count)
        var checked = 0
        for mark in run.marks {
            // A mark is read at its own time, not at a quantum boundary.
            #expect(mark.time == (try #require(scene.marks.first { $0.label == mark.label }).time))
            for (name, expected) in mark.expected {
                let measured = try #require(mark.measured[name], "\(name) was not measured at \"\(mark.label)\"")
                let comment = Comment(
                    rawValue: "\(name) at \"\(mark.label)\" (line \(mark.line)): \(MarkCheck.format(measured)) dBFS, "
                        + "the scene expects \(MarkCheck.format(expected))")
                #expect(MarkCheck.matches(measured, expected, tolerance: 0.1), comment)
                checked += 1
            }
        }
        #expect(checked == 18)

        // The mix holds the whole scene, and is the sum of what the stems measured: at the first mark
        // only the movie plays, so the two read the same.
        #expect(run.mix.count >= Int(scene.duration * 48_000) * 2)
        let first = try #require(run.marks.first)
        #expect(MarkCheck.matches(first.measured["mix"] ?? nil, first.measured["movie"] ?? nil, tolerance: 0.01))

        // Every file was decoded by its own MediaFileSource, and the decoders kept ahead of the engine:
        // no underrun, except that MediaFileSource.waitUntilBuffered() cannot yet wait past the stale
        // frames a seek leaves in the ring, so the quantum right after the movie's one seek may find it dry.
        #expect(run.decoding.count == 4)
        #expect(run.underruns["feed"] == 0 && run.underruns["voice"] == 0 && run.underruns["notification"] == 0)
        #expect((run.underruns["movie"] ?? 99) <= 1)

        // The story as the session told it.
        let events = run.events.map { "\($0.what) \($0.detail) ← \($0.cause)" }
        #expect(events.contains { $0.hasPrefix("duck requested") && $0.hasSuffix("social-feed duck lease#3") })
        #expect(events.contains { $0.hasPrefix("configuration") && $0.contains("playAndRecord") })
        #expect(events.contains { $0.hasPrefix("render quantum 4096 frames") })
        #expect(events.contains { $0.hasPrefix("interruption ended, wait for host") })
        #expect(events.contains { $0.hasPrefix("main playback paused") && $0.contains("route changed") })
        #expect(!events.contains { $0.contains("DROPPED") || $0.contains("REJECTED") || $0.contains("FAILED") })

        // Each stream has a track, and the lanes show what held.
        #expect(run.tracks.map(\.name) == ["movie", "feed", "voice", "notification", "mix"])
        #expect(run.lanes.map(\.name).contains("screen locked"))
        let locked = try #require(run.lanes.first { $0.name == "screen locked" }?.spans.first)
        #expect(abs(locked.lowerBound - 9.5) < 0.03 && abs(locked.upperBound - 11.5) < 0.09)

        // The picture: a PNG and an SVG Cairo wrote.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("watch-party-test-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let png = folder.appendingPathComponent("plot.png").path
        let svg = folder.appendingPathComponent("plot.svg").path
        try LevelPlot.write(run, png: png, svg: svg)
        let pngBytes = try Data(contentsOf: URL(fileURLWithPath: png))
        #expect(pngBytes.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        #expect(pngBytes.count > 20_000)
        let svgText = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(svgText.contains("<svg"))
    }

    /// The other scenes that ship meet their marks too (the default one is checked in detail above).
    @Test(arguments: ["late-night.json", "loudness-duck.json"])
    func anotherSceneMeetsItsMarks(file: String) throws {
        let folder = (SceneReaderTests.defaultScene as NSString).deletingLastPathComponent
        let scene = try Scene.load(path: (folder as NSString).appendingPathComponent(file))
        let run = try SceneRunner(
            scene: scene, engine: .offline, view: LiveView(style: .quiet), logger: Logger(label: "test")
        ).run()
        var failures = 0
        let lines = MarkCheck.lines(for: run, tolerance: 0.1, failures: &failures)
        #expect(failures == 0, Comment(rawValue: lines.joined(separator: "\n")))
        #expect(run.marks.count == scene.marks.count && !run.marks.isEmpty)
        #expect(run.marks.allSatisfy { !$0.expected.isEmpty })
    }

    /// The loudness-duck scene (its marks are checked with the other scenes'): the voice held 10 LU
    /// above the movie in the loud and the quiet stretch alike, measured on the rendered stems by
    /// FFmpeg's `ebur128` (3 s windows every second), not on the engine's own loudness tracks; the host's
    /// volume (0.8) is heard on top, as the LoudnessDucking article's rule says, so the gap as heard is
    /// 10 LU + 1.94 dB. The plot's depth track moves between the stretches, and reads no duck after.
    @Test func theLoudnessDuckSceneHoldsTheVoiceAboveTheMovie() throws {
        let folder = (SceneReaderTests.defaultScene as NSString).deletingLastPathComponent
        let scene = try Scene.load(path: (folder as NSString).appendingPathComponent("loudness-duck.json"))
        let run = try SceneRunner(
            scene: scene, engine: .offline, view: LiveView(style: .quiet), logger: Logger(label: "test")
        ).run()
        let voice = try #require(run.stems["voice"], "no voice stem: \(run.stems.keys.sorted())")
        let movie = try #require(run.stems["movie"], "no movie stem: \(run.stems.keys.sorted())")
        let margin = 10 - 20 * log10(Double(scene.movie.volume))
        // Settled stretches: 3 s after each change of the movie (at 9 and 17 s) and after the voice joined.
        for stretch in [4.5...9.0, 12.0...17.0, 19.0...22.0] {
            var differences: [Double] = []
            var start = stretch.lowerBound
            while start + 3 <= stretch.upperBound {
                let frames = Int(start * 48_000)..<Int((start + 3) * 48_000)
                differences.append(
                    try EBUR128.integrated(voice, frames: frames) - EBUR128.integrated(movie, frames: frames))
                start += 1
            }
            print(
                "[measure] loudness-duck scene, voice − movie by ebur128 in \(stretch) s: "
                    + differences.map { String(format: "%.2f", $0) }.joined(separator: " ") + " LU")
            #expect(!differences.isEmpty)
            #expect(
                differences.allSatisfy { abs($0 - margin) <= 1 },
                "voice − movie by ebur128 in \(stretch): \(differences) LU, \(margin) wanted")
        }
        let depth = try #require(run.tracks.first { $0.name == LevelPlot.duckDepth }, "no depth track").points
        let loud = depth.filter { (8.0...9.0).contains($0.time) }.compactMap(\.level)
        let quiet = depth.filter { (16.0...17.0).contains($0.time) }.compactMap(\.level)
        #expect((loud.max() ?? 0) < (quiet.min() ?? 0) - 6, "the depth moves with the movie's loudness")
        // After the voice chat leaves, no loudness duck is read.
        #expect(depth.last?.level == nil)
    }

    @Test func aLevelOffWhereTheRecordingLostFramesIsShownButNotCounted() throws {
        let scene = try Scene.parse(
            SceneReaderTests.scene([#"{ "at": 1, "mark": "m", "expect": { "movie": -14 } }"#]), path: "t.json")
        func run(gap: Int) -> SceneRun {
            let mark = SceneRun.MarkReading(
                time: 1, label: "m", line: 5, expected: ["movie": -14], measured: ["movie": -20], recordingGap: gap)
            return SceneRun(
                scene: scene, engine: "test", mix: [], stems: [:], tracks: [], markers: [], lanes: [], marks: [mark],
                events: [],
                decoding: [], underruns: [:], duration: 10, renderSeconds: 1)
        }
        var failures = 0
        let lines = MarkCheck.lines(for: run(gap: 0), tolerance: 0.5, failures: &failures)
        #expect(failures == 1)
        #expect(lines.last?.contains("movie -20.00 ✗ expected -14.00") == true)
        failures = 0
        let unsure = MarkCheck.lines(for: run(gap: 2048), tolerance: 0.5, failures: &failures)
        #expect(failures == 0)
        #expect(unsure.last?.contains("movie -20.00 ? expected -14.00") == true)
        #expect(unsure.last?.contains("the recording lost 2048 frames") == true)
    }

    @Test func aLevelOffByMoreThanTheToleranceFails() {
        #expect(MarkCheck.matches(-13.95, -13.98, tolerance: 0.1))
        #expect(!MarkCheck.matches(-13.85, -13.98, tolerance: 0.1))
        #expect(!MarkCheck.matches(nil, -13.98, tolerance: 0.1))
        #expect(!MarkCheck.matches(-80, nil, tolerance: 0.1))
        #expect(MarkCheck.matches(nil, nil, tolerance: 0.1))
    }

    @Test func aMissingMediaFileNamesTheSceneLine() throws {
        let text = SceneReaderTests.scene([#"{ "at": 0, "do": "play" }"#])
            .replacingOccurrences(of: "media/movie.mp4", with: "media/not-there.mp4")
        let scene = try Scene.parse(text, path: "/tmp/watch-party-missing/test.json")
        do {
            _ = try SceneRunner(
                scene: scene, engine: .offline, view: LiveView(style: .quiet), logger: Logger(label: "t")
            )
            .run()
            Issue.record("a scene with a missing movie ran")
        } catch let error as SessionError {
            #expect(error.code == .fileError)
            #expect(error.message.hasPrefix("/tmp/watch-party-missing/test.json:3: the media file media/not-there.mp4"))
        }
    }
}

/// The voice-chat SDK as a helper process: it joins over the socket and ducks the movie, is killed
/// with SIGKILL mid-call, and the movie comes back; a second helper joins and leaves cleanly.
@Suite struct VoiceHelperSceneTests {
    @Test func aKilledVoiceHelperLeavesNoDuckBehind() throws {
        let path = (SceneReaderTests.defaultScene as NSString).deletingLastPathComponent + "/voice-helper.json"
        let scene = try Scene.load(path: path)
        let run = try SceneRunner(
            scene: scene, engine: .offline, view: LiveView(style: .quiet), logger: Logger(label: "test")
        ).run()
        var checked = 0
        for mark in run.marks {
            for (name, expected) in mark.expected {
                let measured = try #require(mark.measured[name], "\(name) was not measured at \"\(mark.label)\"")
                let comment = Comment(
                    rawValue: "\(name) at \"\(mark.label)\": \(MarkCheck.format(measured)) dBFS, "
                        + "the scene expects \(MarkCheck.format(expected))")
                #expect(MarkCheck.matches(measured, expected, tolerance: 0.1), comment)
                checked += 1
            }
        }
        #expect(checked == 7)
        let events = run.events.map { "\($0.what) \($0.detail) ← \($0.cause)" }
        #expect(events.contains { $0.contains("its connection closed") }, "the crash, as the session told it")
        #expect(events.contains { $0.contains("it left") }, "the clean leave")
    }
}
