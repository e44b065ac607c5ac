import Testing

@testable import SharedSession

/// The stream's own gain and its de-click fade, alone: what each frame gets.
@Suite("The gain stage: ramp and de-click")
struct GainRampTests {
    /// Runs `frames` frames and returns the gain times the fade at each.
    static func run(_ ramp: inout GainRamp, frames: Int, playing: Bool = true) -> [Float] {
        (0..<frames).map { _ in ramp.advance(playing: playing) * ramp.declick }
    }

    @Test("a ramp goes in a straight line from where the gain is to the target, and ends exactly on it")
    func straightRamp() {
        var ramp = GainRamp(gain: 1, playing: true, declickFrames: 240)
        ramp.ramp(to: 0.1, frames: 100)
        let values = Self.run(&ramp, frames: 150)
        for (index, value) in values.prefix(99).enumerated() {
            #expect(abs(value - (1 - 0.9 * Float(index + 1) / 100)) < 1e-6, "frame \(index)")
        }
        #expect(values[99] == 0.1)
        #expect(values.dropFirst(99).allSatisfy { $0 == 0.1 })
        #expect(!ramp.isRamping)
        #expect(ramp.isSteady)
    }

    @Test("a new ramp starts from the level reached, not from the old target")
    func replacedMidway() {
        var ramp = GainRamp(gain: 0, playing: true, declickFrames: 240)
        ramp.ramp(to: 1, frames: 100)
        _ = Self.run(&ramp, frames: 50)
        #expect(abs(ramp.gain - 0.5) < 1e-6)
        ramp.ramp(to: 0, frames: 10)
        let values = Self.run(&ramp, frames: 10)
        #expect(abs(values[0] - 0.45) < 1e-6)
        #expect(values[9] == 0)
    }

    @Test("a ramp of 0 frames is a step at once")
    func step() {
        var ramp = GainRamp(gain: 1, playing: true, declickFrames: 240)
        ramp.ramp(to: 0.25, frames: 0)
        #expect(ramp.gain == 0.25)
        #expect(Self.run(&ramp, frames: 3) == [0.25, 0.25, 0.25])
    }

    @Test(
        "a pause fades out over the de-click frames and a resume fades back in; the source is pulled only while heard")
    func declick() {
        var ramp = GainRamp(gain: 1, playing: true, declickFrames: 240)
        #expect(ramp.framesHeard(of: 1024, playing: false) == 240)
        let out = Self.run(&ramp, frames: 300, playing: false)
        #expect(abs(out[0] - (1 - 1 / 240)) < 1e-6)
        // Float steps: closed within a frame of the fade's length.
        #expect(out[239] < 1e-5)
        #expect(out[240] == 0)
        #expect(ramp.isSilent)
        #expect(ramp.framesHeard(of: 1024, playing: false) == 0)
        #expect(ramp.framesHeard(of: 1024, playing: true) == 1024)
        let back = Self.run(&ramp, frames: 300)
        #expect(abs(back[119] - 0.5) < 1e-5)
        #expect(back[239] > 1 - 1e-5)
        #expect(back[240] == 1)
        // Largest step between frames: a fade, never a cut.
        let steps = zip(out.dropFirst(), out).map { abs($0 - $1) } + zip(back.dropFirst(), back).map { abs($0 - $1) }
        #expect(steps.max()! <= 1 / 240 + 1e-6)
    }

    @Test("a ramp asked while silent ends on its target at once, so the stream fades in at it")
    func silentRampSkipped() {
        var ramp = GainRamp(gain: 1, playing: false, declickFrames: 240)
        ramp.ramp(to: 0.2, frames: 4800)
        ramp.skipRampIfSilent()
        #expect(ramp.gain == 0.2)
        #expect(!ramp.isRamping)
        var playing = GainRamp(gain: 1, playing: true, declickFrames: 240)
        playing.ramp(to: 0.2, frames: 4800)
        playing.skipRampIfSilent()
        #expect(playing.isRamping, "heard: the ramp is not cut short")
    }
}
