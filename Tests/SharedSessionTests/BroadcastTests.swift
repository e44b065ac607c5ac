import SharedSession
import Synchronization
import Testing

@Suite("A broadcast hands each event to the listeners of the moment")
struct BroadcastTests {
    /// Everything a stream holds once it has ended.
    private func collect(_ stream: AsyncStream<String>) async -> [String] {
        var elements: [String] = []
        for await element in stream { elements.append(element) }
        return elements
    }

    @Test("the first listener starts with what came before anyone listened; a later one does not")
    func firstListenerTakesTheBacklog() async {
        let broadcast = Broadcast<String, String>(backlogLimit: 8, replay: .toFirstListener)
        broadcast.emit("a")
        broadcast.emit("b")
        let first = broadcast.subscribe()
        broadcast.emit("c")
        let second = broadcast.subscribe()
        broadcast.emit("d")
        broadcast.finish()
        #expect(await collect(first) == ["a", "b", "c", "d"])
        #expect(await collect(second) == ["d"])
    }

    @Test("it is listening while a stream or a handler is there, and not once they are gone or it ended")
    func listeningFollowsTheListeners() {
        let broadcast = Broadcast<String, String>(backlogLimit: 8, replay: .toFirstListener)
        #expect(!broadcast.isListening)
        do {
            let stream = broadcast.subscribe()
            #expect(broadcast.isListening)
            _ = stream
        }
        // The stream let go of: its termination removed it.
        #expect(!broadcast.isListening)
        broadcast.handler = { _ in }
        #expect(broadcast.isListening)
        broadcast.handler = nil
        #expect(!broadcast.isListening)
        let stream = broadcast.subscribe()
        broadcast.finish()
        #expect(!broadcast.isListening)
        _ = stream
    }

    @Test("every listener, streams and handlers, starts with the backlog when it is replayed to each")
    func everyListenerTakesTheBacklog() async {
        let broadcast = Broadcast<String, String>(backlogLimit: 8, replay: .toEveryListener)
        broadcast.emit("a")
        let first = broadcast.subscribe()
        broadcast.emit("b")
        let heard = Mutex<[String]>([])
        broadcast.handler = { element in heard.withLock { $0.append(element) } }
        let second = broadcast.subscribe()
        broadcast.emit("c")
        broadcast.finish()
        #expect(await collect(first) == ["a", "b", "c"])
        #expect(await collect(second) == ["a", "c"])
        #expect(heard.withLock { $0 } == ["a", "c"])
    }

    @Test("past the backlog's limit items are counted, and the first listener is told how many")
    func lostItemsAreCounted() async {
        let broadcast = Broadcast<String, String>(
            backlogLimit: 2, replay: .toFirstListener, lost: { "lost \($0)" })
        for item in ["a", "b", "c", "d", "e"] { broadcast.emit(item) }
        let stream = broadcast.subscribe()
        broadcast.finish()
        #expect(await collect(stream) == ["a", "b", "lost 3"])
    }

    @Test("an item is transformed only while someone listens, and one that does not transform is dropped")
    func transformOnlyForListeners() async {
        let transformed = Mutex(0)
        let broadcast = Broadcast<Int, String>(backlogLimit: 4, replay: .toFirstListener) { item in
            transformed.withLock { $0 += 1 }
            return item < 0 ? nil : "\(item)"
        }
        broadcast.emit(1)
        broadcast.emit(-1)
        #expect(transformed.withLock { $0 } == 0)
        let stream = broadcast.subscribe()
        #expect(transformed.withLock { $0 } == 2)
        broadcast.emit(2)
        #expect(transformed.withLock { $0 } == 3)
        broadcast.finish()
        // Heard, but nobody listening any more: nothing to transform for.
        broadcast.emit(3)
        #expect(transformed.withLock { $0 } == 3)
        #expect(await collect(stream) == ["1", "2"])
    }

    @Test("the end reaches every stream as its last element, and a stream asked for after the end")
    func finalElementForLateListeners() async {
        let broadcast = Broadcast<String, String>(backlogLimit: 4, replay: .toFirstListener)
        let early = broadcast.subscribe()
        broadcast.emit("a")
        broadcast.finish(with: "ended")
        broadcast.finish(with: "ended again")
        broadcast.emit("b")
        #expect(await collect(early) == ["a", "ended"])
        #expect(await collect(broadcast.subscribe()) == ["ended"])
    }

    @Test("a listener that comes only after the end still gets what was kept, then the end")
    func backlogBeforeTheEnd() async {
        let broadcast = Broadcast<String, String>(backlogLimit: 4, replay: .toFirstListener)
        broadcast.emit("a")
        broadcast.finish(with: "ended")
        #expect(await collect(broadcast.subscribe()) == ["a", "ended"])
    }

    @Test("an element sent, not emitted, goes to the listeners of the moment and is never kept")
    func sentElementsAreNotKept() async {
        let broadcast = Broadcast<String, String>(backlogLimit: 4, replay: .toEveryListener)
        broadcast.send("unheard")
        let stream = broadcast.subscribe()
        broadcast.send("heard")
        broadcast.finish()
        #expect(await collect(stream) == ["heard"])
        #expect(await collect(broadcast.subscribe()) == [])
    }
}
