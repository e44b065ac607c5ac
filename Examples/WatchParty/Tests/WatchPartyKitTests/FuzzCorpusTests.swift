import Foundation
import Testing
import WatchPartyKit

/// The fuzzer's scene files (Fuzz/Seeds/scene and the minimized Fuzz/Corpus/scene, see `Scripts/fuzz`)
/// read again without the fuzzer: each is a scene or a `SceneError` naming what was expected. An input
/// that once crashed, hung or leaked is kept in the corpus, so this is its regression test.
@Suite("Scene parser on the fuzz corpus")
struct SceneFuzzCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func inputs(_ folder: String) throws -> [URL] {
        let url = root.appending(path: folder)
        return try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test("every seed and corpus input is a scene or a SceneError naming the file and what was expected")
    func corpusIsReadOrRefused() throws {
        let seeds = try Self.inputs("Fuzz/Seeds/scene")
        let corpus = try Self.inputs("Fuzz/Corpus/scene")
        #expect(seeds.count >= 2 && corpus.count >= 10, "the fuzz corpus was not found under \(Self.root.path)")
        var read = 0
        var refused = 0
        for url in seeds + corpus {
            let data = try Data(contentsOf: url)
            // As Scene.load: only UTF-8 text is parsed.
            guard let text = String(data: data, encoding: .utf8) else { continue }
            do {
                let scene = try Scene.parse(text, path: "/fuzz/\(url.lastPathComponent)")
                #expect(scene.duration > 0, "\(url.lastPathComponent)")
                read += 1
            } catch {
                #expect(!error.expected.isEmpty, "\(url.lastPathComponent): \(error)")
                #expect(error.description.hasPrefix("/fuzz/\(url.lastPathComponent):"), "\(error)")
                refused += 1
            }
        }
        print("[measure] scene fuzz corpus: \(read) read, \(refused) refused")
        #expect(read >= 2, "the seeds (the example's scenes) are scenes")
        #expect(refused >= 1)
    }
}
