import NIOCore
import NIOPosix
import SharedSession
import SharedSessionRemote
import SharedSessionTestSupport
import Testing

extension RemoteTests {
    /// A unit reads the host's lines by their shape: a host that writes its keys in another order, with
    /// spaces, is understood all the same, and an event that comes before anything listens is kept for
    /// the first stream as the events of a host writing sorted keys are.
    @Suite("A unit reads the host's lines by their shape")
    struct HostLineShapeTests {
        @Test("an event written with unsorted keys and spaces before the first stream reaches that stream")
        func unsortedEventIsKept() async throws {
            let path = socketPath("canned-host")
            let host = try CannedHost.serve(
                at: path,
                answers: [
                    // To the hello:
                    [
                        #"{ "welcome" : { "startsFromNothing": true, "protocol": 2, "owner": "canned", "connection": 1 } }"#,
                        #"{ "event" : { "what": "by hand", "owner": "canned", "kind": "releaseIgnored", "#
                            + #""cause": { "owner": "canned", "kind": "unit" } } }"#,
                    ],
                    // To the acquire:
                    [#"{ "granted" : { "type": "generic", "lease": 5 }, "reply" : 1 }"#],
                ])
            defer { host.close(promise: nil) }

            let remote = try await RemoteSession.connect(path: path, owner: "canned", timeout: .seconds(1))
            #expect(remote.welcome.protocolVersion == 2 && remote.owner == "canned")
            // Its reply comes after the event on the one connection: the event was read by then.
            let lease = try await remote.acquire(.generic)
            #expect(lease.id == LeaseID(rawValue: 5))
            let stream = remote.events
            // The leave goes unanswered and the unit closes after its timeout: a stream without the event
            // ends rather than waits.
            await remote.leave()
            var events = stream.makeAsyncIterator()
            guard case .event(let event)? = await events.next() else {
                Issue.record("the first stream did not start with the event the host sent before it")
                return
            }
            #expect("\(event.kind)".hasPrefix("releaseIgnored"), "\(event)")
        }
    }
}

/// A host written by hand: after each line it reads, it writes the next group of `answers`, as given.
final class CannedHost: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let answers: [[String]]
    private var answered = 0
    private var pending: [UInt8] = []

    init(answers: [[String]]) { self.answers = answers }

    static func serve(at path: String, answers: [[String]]) throws -> any Channel {
        try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(CannedHost(answers: answers))
                }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).wait()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending += unwrapInboundIn(data).readableBytesView
        while let newline = pending.firstIndex(of: 10) {
            pending.removeSubrange(...newline)
            guard answered < answers.count else { continue }
            for line in answers[answered] {
                context.write(wrapOutboundOut(ByteBuffer(string: line + "\n")), promise: nil)
            }
            answered += 1
            context.flush()
        }
    }
}
