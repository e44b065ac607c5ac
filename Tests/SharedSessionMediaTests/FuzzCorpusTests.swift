import Foundation
import SharedSession
import SharedSessionMedia
import SharedSessionTestSupport
import Testing

/// The fuzzer's media files (Fuzz/Seeds/media, a small file of each container, and the minimized
/// Fuzz/Corpus/media, and the inputs of past findings in Fuzz/Regressions/media, see `Scripts/fuzz`) opened and played again without the fuzzer, as the fuzz
/// target does: ten quanta, a seek to the middle, ten more. Each plays or is refused with a typed
/// error. An input that once crashed, hung or leaked is kept in the corpus, so this is its regression test.
@Suite("Media files of the fuzz corpus")
struct MediaFuzzCorpusTests {
    static let root = RepositoryFiles.root

    static func inputs(_ folder: String) throws -> [URL] { try RepositoryFiles.files(in: folder) }

    /// Plays `path` as the fuzz target does; returns the peak of what it rendered.
    static func play(_ path: String) throws(SessionError) -> Float {
        let source = try MediaFileSource(path: path, bufferFrames: 4096, startsPlaying: true)
        var buffer = [Float](repeating: 0, count: 2048)
        var peak: Float = 0
        func quanta() throws(SessionError) {
            for _ in 0..<10 {
                try source.waitUntilReady(frames: 1024, timeout: .seconds(5))
                let frames = buffer.withUnsafeMutableBufferPointer {
                    source.render(into: $0.baseAddress!, frames: 1024)
                }
                peak = max(peak, buffer[0..<(frames * 2)].map(abs).max() ?? 0)
            }
        }
        try quanta()
        try source.seek(to: source.duration.map { $0 / 2 } ?? .milliseconds(100))
        try quanta()
        return peak
    }

    @Test("each container's seed plays its tone; the video without sound is noAudioTrack")
    func seedsPlay() throws {
        for url in try Self.inputs("Fuzz/Seeds/media") {
            if url.lastPathComponent == "video-only.mp4" {
                #expect(throws: SessionError.self) { try Self.play(url.path) }
                do { _ = try Self.play(url.path) } catch { #expect(error.code == .noAudioTrack) }
                continue
            }
            let peak = try Self.play(url.path)
            // The seeds are a 440 Hz sine at ffmpeg's default amplitude 1/8 (−18 dBFS), lossy codecs included.
            #expect(peak > 0.1 && peak < 0.2, "\(url.lastPathComponent): peak \(peak)")
        }
    }

    @Test("every corpus input plays or is refused with mediaUnreadable, noAudioTrack or fileError")
    func corpusPlaysOrIsRefused() throws {
        let corpus = try Self.inputs("Fuzz/Corpus/media") + Self.inputs("Fuzz/Regressions/media")
        #expect(corpus.count >= 10, "the fuzz corpus was not found under \(Self.root.path)")
        var played = 0
        var refused = 0
        for url in corpus {
            do {
                _ = try Self.play(url.path)
                played += 1
            } catch {
                #expect(
                    [.mediaUnreadable, .noAudioTrack, .fileError].contains(error.code),
                    "\(url.lastPathComponent): \(error.message)")
                #expect(error.message.contains(url.path), "\(error.message)")
                refused += 1
            }
        }
        print("[measure] media fuzz corpus: \(played) played, \(refused) refused")
        #expect(played >= 1)
    }
}
