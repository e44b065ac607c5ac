import SharedSession
import Testing

@testable import SharedSessionPipeWire

/// The overlay bus's mixing and its table hand-over, driven as the data thread would drive it: no
/// daemon needed.
@Suite("Overlay bus without a daemon")
struct OverlayBusTests {
    /// A source of a constant level on both channels.
    static func constant(_ level: Float) throws -> PCMBufferSource {
        try PCMBufferSource(samples: [Float](repeating: level, count: 2 * 480), loops: true)
    }

    /// A source that runs `action` the first time it renders: something the loop thread does while
    /// the data thread is inside a cycle.
    final class Interrupting: AudioSource, @unchecked Sendable {
        // @unchecked: the test sets `action` and renders on its one thread; nothing else touches it.
        var action: (() -> Void)?
        func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
            buffer.update(repeating: 0.5, count: frames * 2)
            action?()
            action = nil
            return frames
        }
    }

    func cycle(_ bus: OverlayBus, frames: Int = 256) -> [Float] {
        var output = [Float](repeating: 9, count: frames * 2)
        output.withUnsafeMutableBufferPointer { bus.render(into: $0.baseAddress!, frames: frames, suspended: false) }
        return output
    }

    @Test("the bus overwrites its buffer with the sum of its overlays at their gains, a metered overlay included")
    func mixes() throws {
        let bus = OverlayBus(format: .standard)
        #expect(cycle(bus).allSatisfy { $0 == 0 }, "an empty bus renders silence over what was there")
        let first = StreamRenderer(source: try Self.constant(0.25), gain: 1, paused: false)
        let second = StreamRenderer(source: try Self.constant(0.5), gain: 0.5, paused: false)
        let meter = try #require(second.activityMeter())
        bus.add(StreamID(rawValue: 1), renderer: first)
        bus.add(StreamID(rawValue: 2), renderer: second)
        let mixed = cycle(bus, frames: 2048)
        #expect(mixed.allSatisfy { abs($0 - 0.5) < 1e-6 }, "0.25 + 0.5 × 0.5")
        #expect(meter.activeSpan().block > 0, "the metered overlay measured what it played")
        second.setPaused(true)
        _ = cycle(bus)
        #expect(cycle(bus).allSatisfy { abs($0 - 0.25) < 1e-6 }, "the paused overlay faded out, the other plays")
    }

    @Test("a table swapped out while the data thread renders it is freed only after that cycle ends")
    func retiresAfterTheCycle() throws {
        let bus = OverlayBus(format: .standard)
        let source = Interrupting()
        weak var weakRenderer: StreamRenderer?
        var stillHeldDuringCycle = false
        do {
            let renderer = StreamRenderer(source: source, gain: 1, paused: false)
            weakRenderer = renderer
            bus.add(StreamID(rawValue: 1), renderer: renderer)
        }
        source.action = {
            // Mid-cycle: the overlay closes (no node, so it leaves the table at once).
            bus.remove(StreamID(rawValue: 1))
            stillHeldDuringCycle = weakRenderer != nil
        }
        let during = cycle(bus)
        #expect(stillHeldDuringCycle, "the table the cycle reads was freed under it")
        #expect(during.allSatisfy { $0 == 0.5 }, "the cycle finished with the table it started with")
        #expect(weakRenderer != nil, "freed before the loop thread looked again")
        bus.collect()
        #expect(weakRenderer == nil, "the old table (and the closed overlay's renderer) is freed once the cycle ended")
        #expect(cycle(bus).allSatisfy { $0 == 0 })
    }
}
