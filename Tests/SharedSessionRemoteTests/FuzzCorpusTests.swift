import Foundation
import SharedSession
import SharedSessionRemote
import SharedSessionTestSupport
import Testing

extension RemoteTests {
    /// The fuzzer's unit lines (Fuzz/Seeds/remote and the minimized Fuzz/Corpus/remote, see
    /// `Scripts/fuzz`) read again without the fuzzer: each is a message or a `protocolViolation`. An
    /// input that once crashed, hung or leaked is kept in the corpus, so this is its regression test.
    @Suite("Unit line decoder on the fuzz corpus")
    struct FuzzCorpusTests {
        static let root = RepositoryFiles.root

        static func inputs(_ folder: String) throws -> [URL] { try RepositoryFiles.files(in: folder) }

        @Test("every seed and corpus line decodes to a message that encodes back to itself, or is a protocolViolation")
        func corpusIsDecodedOrRefused() throws {
            let seeds = try Self.inputs("Fuzz/Seeds/remote")
            let corpus = try Self.inputs("Fuzz/Corpus/remote")
            #expect(seeds.count >= 20, "the fuzz seeds were not found under \(Self.root.path)")
            var decoded = 0
            var refused = 0
            var hostOnly = 0
            for url in seeds + corpus {
                let line = [UInt8](try Data(contentsOf: url))
                let isSeed = seeds.contains(url)
                do {
                    let message = try RemoteProtocol.decodeUnitLine(line)
                    // What a decoded line means survives the trip through the wire's own coding.
                    #expect(
                        try RemoteProtocol.decodeUnitLine(RemoteProtocol.encode(message).dropLast()) == message,
                        "\(url.lastPathComponent)")
                    decoded += 1
                } catch {
                    #expect(error.code == .protocolViolation, "\(url.lastPathComponent): \(error.message)")
                    refused += 1
                    // Every seed is a well-formed line a unit sends: a request the host takes, or one for
                    // an input only the host sends (the host's own inputs are seeds too), refused as such.
                    let isHostOnly = error.message.hasPrefix("a unit may not send the input ")
                    if isHostOnly { hostOnly += 1 }
                    #expect(!isSeed || isHostOnly, "seed \(url.lastPathComponent): \(error.message)")
                }
            }
            print(
                "[measure] remote fuzz corpus: \(decoded) decoded, \(refused) refused (\(hostOnly) as host-only inputs)"
            )
            #expect(decoded + hostOnly >= seeds.count, "every seed is a line a unit sends")
        }

        @Test(
            "every seed and corpus line read as version 2 is a message that encodes back to itself, or a protocolViolation"
        )
        func corpusReadAsVersionTwo() throws {
            var decoded = 0
            for url in try Self.inputs("Fuzz/Seeds/remote") + Self.inputs("Fuzz/Corpus/remote") {
                let line = [UInt8](try Data(contentsOf: url))
                do {
                    let message = try RemoteProtocol.decodeUnitLine(line, version: 2, owner: "fuzz")
                    let written = RemoteProtocol.encode(message, version: 2).dropLast()
                    #expect(
                        try RemoteProtocol.decodeUnitLine(written, version: 2, owner: "fuzz") == message,
                        "\(url.lastPathComponent)")
                    decoded += 1
                } catch {
                    #expect(error.code == .protocolViolation, "\(url.lastPathComponent): \(error.message)")
                }
            }
            // The hellos, snapshots and leaves, whose lines version 2 keeps.
            #expect(decoded > 0)
        }
    }
}
