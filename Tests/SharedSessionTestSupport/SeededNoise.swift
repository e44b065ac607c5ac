import Foundation

/// A small seeded generator of uniform noise in −1...1, so a failing run replays exactly.
package struct SeededNoise {
    package var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> Float {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max)
    }
}

extension Float {
    /// sin(2π · frequency · frame / 48 kHz), from the frame number so it never drifts.
    package static func sinePhase(_ frame: Int, frequency: Double) -> Float {
        Float(sin(2 * Double.pi * Double(frame) * frequency / 48_000))
    }
}
