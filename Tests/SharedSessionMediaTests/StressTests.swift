import Foundation
import SharedSession
import SharedSessionMedia
import Synchronization
import Testing

/// The control side hammering a source from another thread while it renders: seeks, loop switches,
/// pauses. Nothing may get stuck, play garbage or leave the clock off the file; afterwards the source
/// plays correctly again.
@Suite("Stress")
struct StressTests {
    @Test("seeks, loop switches and pauses from another thread while rendering never break playback")
    func controlWhileRendering() async throws {
        let path = try MediaFiles.tone("stress.flac", frequency: 480, seconds: 1, codec: ["-c:a", "flac"])
        let source = try MediaFileSource(path: path, bufferFrames: 8192, startsPlaying: true)
        let done = Atomic<Bool>(false)
        let actions = Atomic<Int>(0)
        let control = Task.detached {
            var generator = SystemRandomNumberGenerator()
            while !done.load(ordering: .relaxed) {
                switch Int.random(in: 0..<6, using: &generator) {
                case 0: try? source.seek(to: .milliseconds(Int.random(in: 0...1100, using: &generator)))
                case 1, 2: source.isLooping.toggle()
                case 3: source.pause()
                default: source.play()
                }
                actions.add(1, ordering: .relaxed)
                // A scrubbing user seeks at most every few milliseconds; faster than the decoder can
                // read a chunk, seeks only starve the ring (the audio of a position never comes).
                try? await Task.sleep(for: .microseconds(Int.random(in: 500...6000, using: &generator)))
            }
        }
        var peak: Float = 0
        var finite = true
        var buffer = [Float](repeating: 0, count: 1024 * 2)
        for round in 0..<600 {
            let frames = [64, 256, 1024, 333][round % 4]
            let count = buffer.withUnsafeMutableBufferPointer { source.render(into: $0.baseAddress!, frames: frames) }
            for sample in buffer[0..<count * 2] {
                finite = finite && sample.isFinite
                peak = max(peak, abs(sample))
            }
            #expect(source.clock >= .zero && source.clock <= .milliseconds(1100))
            if round % 8 == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        done.store(true, ordering: .relaxed)
        await control.value
        print(
            "stress: \(actions.load(ordering: .relaxed)) control actions, peak \(peak), \(source.underrunCount) "
                + "underruns"
        )
        #expect(finite)
        #expect(peak > 0.1)  // it played
        // A declick tail and a fade-in may overlap, never more.
        #expect(peak <= 0.125 * 2)

        // Afterwards: a plain seek plays the file from there, at its level, with the clock on it.
        source.isLooping = false
        source.play()
        try source.seek(to: .milliseconds(200))
        let after = Listen.render(source, frames: 24_000)
        #expect(source.clock == .milliseconds(700))
        #expect(abs(Listen.level(Listen.channel(after, 0)[480...]) - sineLevel) < 0.1)
        #expect(abs(Listen.frequency(Listen.channel(after, 0)[480...]) - 480) < 0.05)
    }
}
