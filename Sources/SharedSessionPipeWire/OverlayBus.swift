import SharedSession
import Synchronization

/// The overlay bus of ``StreamLayout/mixedOverlays``: one `pw_stream` whose process callback renders
/// every overlay's ``StreamRenderer`` into its one buffer.
///
/// **Publishing to the data thread.** The loop thread owns the set of overlays and publishes it as an
/// immutable ``Table`` swapped into ``current`` (an atomic word holding a retained reference). The data
/// thread reads the word once per cycle and renders the table it points to, without a lock, an
/// allocation or a reference count. A replaced table is kept until the data thread has provably moved
/// past it: every cycle takes a number (``begun``) before it reads the table and stores it in
/// ``finished`` when done, so a table swapped out when ``begun`` was `n` is freed, on the loop thread,
/// once ``finished`` reaches `n` (cycles after `n` can only have read the new table). Cycles run one
/// at a time on the context's one data thread.
///
/// **Closing without a click.** A closed overlay is paused (its renderer's 5 ms de-click fade) and
/// stays in the table until its renderer reports it inaudible; ``collect()`` then drops it.
///
/// Loop thread only, except ``render(into:frames:channels:suspended:)`` on the data thread.
final class OverlayBus {
    /// An immutable set of renderers for one or more cycles: those that follow other streams'
    /// activity last, so they hear this cycle's activity of the overlays they follow.
    final class Table {
        /// Keeps the renderers alive for as long as the table is.
        let renderers: [StreamRenderer]
        /// The same renderers, for the data thread to use without retaining and releasing each one.
        let unretained: [Unmanaged<StreamRenderer>]

        init(renderers: [StreamRenderer]) {
            self.renderers = renderers
            unretained = renderers.map { Unmanaged.passUnretained($0) }
        }
    }

    /// The table the data thread renders: the bits of an `Unmanaged<Table>` retained once, 0 for none.
    private let current = Atomic<UInt>(0)
    /// The number of the last cycle that started (data thread writes).
    private let begun = Atomic<UInt64>(0)
    /// The number of the last cycle that finished (data thread writes).
    private let finished = Atomic<UInt64>(0)
    /// Where an overlay whose activity another stream follows renders alone before it is added in, so
    /// its renderer measures what it plays and not the mix.
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchFrames = AudioFormat.maximumQuantum
    private let channels: Int

    // Loop thread only.
    /// The open overlays.
    private(set) var members: [StreamID: StreamRenderer] = [:]
    /// Closed overlays fading out, dropped by ``collect()`` once inaudible.
    private var closing: [StreamRenderer] = []
    /// Replaced tables and the cycle the data thread must finish before each is freed.
    private var retired: [(table: UInt, after: UInt64)] = []
    /// The bus's node, while connected and while it has overlays.
    var node: PipeWireStream?

    init(format: AudioFormat) {
        channels = format.channels
        scratch = .allocate(capacity: scratchFrames * format.channels)
        scratch.initialize(repeating: 0, count: scratchFrames * format.channels)
    }

    deinit {
        // The node is destroyed first (EngineCore.shutdown), so no cycle can run any more.
        release(current.exchange(0, ordering: .sequentiallyConsistent))
        for entry in retired { release(entry.table) }
        scratch.deallocate()
    }

    /// The overlays on the bus, by id.
    var memberIDs: [StreamID] { members.keys.sorted() }

    /// Whether the loop must look again soon: a closed overlay still fading, or a replaced table the data
    /// thread may still be reading. The data thread finishes both without telling the loop.
    var hasPendingWork: Bool { !closing.isEmpty || !retired.isEmpty }

    /// Whether anything is on the bus, closing overlays still fading out included.
    var isEmpty: Bool { members.isEmpty && closing.isEmpty }

    /// Adds (or replaces) an overlay and publishes the new set.
    func add(_ id: StreamID, renderer: StreamRenderer) {
        if let old = members.updateValue(renderer, forKey: id), old !== renderer { fadeOut(old) }
        publish()
    }

    /// Whether `id` is an overlay on the bus.
    func contains(_ id: StreamID) -> Bool { members[id] != nil }

    /// Takes an overlay off the bus: it fades out over its de-click time and is dropped after.
    func remove(_ id: StreamID) {
        guard let renderer = members.removeValue(forKey: id) else { return }
        fadeOut(renderer)
        publish()
    }

    private func fadeOut(_ renderer: StreamRenderer) {
        // Without a running node nothing renders the fade: drop it at once.
        guard node != nil else { return }
        renderer.setPaused(true)
        closing.append(renderer)
    }

    /// Drops the closed overlays that have faded out and frees the tables the data thread has left.
    /// Returns whether a closed overlay is still fading (call again soon).
    @discardableResult
    func collect() -> Bool {
        let count = closing.count
        closing.removeAll { !$0.isAudible || node == nil }
        if closing.count != count { publish() }
        reclaim()
        return !closing.isEmpty
    }

    /// Forgets every overlay's node-side state after the node went away (a disconnection): the
    /// closing ones can no longer be heard.
    func nodeDestroyed() {
        node = nil
        if !closing.isEmpty {
            closing.removeAll()
            publish()
        }
        reclaim()
    }

    private func publish() {
        let open = members.keys.sorted().compactMap { members[$0] } + closing
        let renderers = open.filter { !$0.followsActivity } + open.filter { $0.followsActivity }
        let table = UInt(bitPattern: Unmanaged.passRetained(Table(renderers: renderers)).toOpaque())
        let old = current.exchange(table, ordering: .sequentiallyConsistent)
        if old != 0 { retired.append((old, begun.load(ordering: .sequentiallyConsistent))) }
        reclaim()
    }

    private func reclaim() {
        guard !retired.isEmpty else { return }
        let done = finished.load(ordering: .acquiring)
        retired.removeAll { entry in
            guard entry.after <= done else { return false }
            release(entry.table)
            return true
        }
    }

    private func release(_ bits: UInt) {
        guard bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) else { return }
        Unmanaged<Table>.fromOpaque(pointer).release()
    }

    // MARK: Data thread

    /// Real-time: renders one cycle of every overlay into `output` (overwritten). Atomics, the table
    /// and the renderers only: no lock, allocation, reference count or system call.
    @inline(__always)
    func render(
        into output: UnsafeMutablePointer<Float>, frames: Int, suspended: Bool,
        heard: (heardAt: MonotonicInstant, latency: Int)? = nil
    ) {
        let cycle = begun.add(1, ordering: .sequentiallyConsistent).newValue
        let bits = current.load(ordering: .sequentiallyConsistent)
        output.update(repeating: 0, count: frames &* channels)
        if let pointer = UnsafeRawPointer(bitPattern: bits) {
            Unmanaged<Table>.fromOpaque(pointer)._withUnsafeGuaranteedRef { table in
                table.unretained.withUnsafeBufferPointer { renderers in
                    for index in renderers.indices {
                        renderers[index]._withUnsafeGuaranteedRef { renderer in
                            if let heard { renderer.publishOutputLatency(nanoseconds: heard.latency) }
                            if renderer.measuresActivity {
                                renderAlone(
                                    renderer, into: output, frames: frames, suspended: suspended,
                                    heardAt: heard?.heardAt)
                            } else {
                                renderer.render(
                                    into: output, frames: frames, accumulate: true, suspended: suspended,
                                    heardAt: heard?.heardAt)
                            }
                        }
                    }
                }
            }
        }
        finished.store(cycle, ordering: .releasing)
    }

    /// Renders an overlay whose activity is followed into the scratch (so its meter hears it alone),
    /// then adds it in: the renderer meters only what it renders without `accumulate`.
    @inline(__always)
    private func renderAlone(
        _ renderer: StreamRenderer, into output: UnsafeMutablePointer<Float>, frames: Int, suspended: Bool,
        heardAt: MonotonicInstant?
    ) {
        var done = 0
        while done < frames {
            let chunk = min(frames &- done, scratchFrames)
            let chunkHeardAt = heardAt.map {
                MonotonicInstant(
                    nanoseconds: $0.nanoseconds &+ Int64(done) &* 1_000_000_000 / Int64(renderer.format.sampleRate))
            }
            renderer.render(
                into: scratch, frames: chunk, accumulate: false, suspended: suspended, heardAt: chunkHeardAt)
            let target = output + done &* channels
            for index in 0..<(chunk &* channels) { target[index] += scratch[index] }
            done &+= chunk
        }
    }
}
