import SharedSession
import Testing

/// `SharedSession.bootstrap` is once, before any use, as swift-log's `LoggingSystem.bootstrap` is: a
/// later call stops the process and says where the session was set up. Each case runs in a child
/// process of its own (an exit test), so the process-wide session of this one is never touched.
@Suite("Bootstrap")
struct BootstrapTests {
    @Test("a bootstrap after SharedSession.shared was used stops the process, naming the first use")
    func bootstrapAfterUseStops() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = SharedSession.shared
            SharedSession.bootstrap(engine: OfflineEngine(), policy: .default)
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("came after the shared session was set up"))
        #expect(message.contains("SharedSession.shared was first used before any bootstrap"))
        #expect(message.contains("BootstrapTests.swift"))
    }

    @Test("a second bootstrap stops the process, naming the first one's file and line")
    func secondBootstrapStops() async throws {
        // In an exit test's body #line is the macro's line for every call, so the two calls name lines of
        // their own: the message must give the first one's, not the second's.
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            SharedSession.bootstrap(engine: OfflineEngine(), policy: .default, line: 1001)
            SharedSession.bootstrap(engine: OfflineEngine(), policy: .default, line: 1002)
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("It was bootstrapped at SharedSessionTests/BootstrapTests.swift:"))
        #expect(message.contains("It was bootstrapped at SharedSessionTests/BootstrapTests.swift:1001."), "\(message)")
    }

    @Test("one bootstrap before any use is the session shared reads, with its engine")
    func bootstrapThenShared() async {
        await #expect(processExitsWith: .success) {
            let engine = OfflineEngine()
            SharedSession.bootstrap(engine: engine, policy: .default)
            guard SharedSession.shared.engine as? OfflineEngine === engine else { fatalError("another engine") }
        }
    }
}
