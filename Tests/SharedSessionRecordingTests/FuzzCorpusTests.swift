import Foundation
import SharedSession
import SharedSessionRecording
import SharedSessionTestSupport
import Testing

/// The fuzzer's recordings (Fuzz/Seeds/recording and the minimized Fuzz/Corpus/recording, see
/// `Scripts/fuzz`) read again without the fuzzer: each is a recording or an `invalidRecording` error
/// naming its line. An input that once crashed, hung or leaked is kept in the corpus, so this is its
/// regression test.
@Suite("Recording reader on the fuzz corpus")
struct RecordingFuzzCorpusTests {
    static let root = RepositoryFiles.root

    static func inputs(_ folder: String) throws -> [URL] { try RepositoryFiles.files(in: folder) }

    @Test("every seed and corpus input is read or refused with invalidRecording, naming the line")
    func corpusIsReadOrRefused() throws {
        let seeds = try Self.inputs("Fuzz/Seeds/recording")
        let corpus = try Self.inputs("Fuzz/Corpus/recording")
        #expect(seeds.count >= 2 && corpus.count >= 10, "the fuzz corpus was not found under \(Self.root.path)")
        var read = 0
        var refused = 0
        for url in seeds + corpus {
            let data = try Data(contentsOf: url)
            // As SessionRecording(contentsOf:): only UTF-8 text is parsed.
            guard let text = String(data: data, encoding: .utf8) else { continue }
            do {
                let recording = try SessionRecording(parsing: text)
                #expect(recording.sampleRate > 0 && recording.channels > 0, "\(url.lastPathComponent)")
                read += 1
            } catch {
                #expect(error.code == .invalidRecording, "\(url.lastPathComponent): \(error.message)")
                #expect(error.message.hasPrefix("line "), "\(url.lastPathComponent): \(error.message)")
                refused += 1
            }
        }
        print("[measure] recording fuzz corpus: \(read) read, \(refused) refused")
        #expect(read >= 2, "the seeds (the golden recording and its head) are recordings")
        #expect(refused >= 1)
    }
}
