import SharedSession
import Testing

@testable import SharedSessionMedia

/// The media source's stages alone: the de-click, a seek's plan and the gap finder, each driven by
/// hand with values whose answer is worked out here, not by the code under test.
@Suite("Media source stages")
struct MediaStageTests {
    /// 5 ms at 48 kHz.
    static let fade = 240

    @Test("a pause fades a full-scale signal to silence over 5 ms, no step larger than one 240th")
    func pauseFadesOverFiveMilliseconds() {
        var declicker = Declicker()
        declicker.start(audible: true)
        var samples = [Float](repeating: 1, count: 2 * 400)
        samples.withUnsafeMutableBufferPointer { declicker.shape($0.baseAddress!, frames: 400, audible: false) }
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        #expect(left[0] < 1 && left[0] > 0.99)
        #expect(left[Self.fade - 2] > 0)
        #expect(left[Self.fade...].allSatisfy { $0 == 0 })
        let steps = zip(left, left.dropFirst()).map { abs($0 - $1) }
        #expect(steps.max()! <= 1 / Float(Self.fade) + 1e-5)
        #expect(declicker.fadeGain == 0)
        #expect(declicker.framesToFadeOut == 0)
    }

    @Test("a break in the audio lets the last sample decay over 5 ms while the new audio fades in from 0")
    func discontinuityDecaysTheLastSample() {
        var declicker = Declicker()
        declicker.start(audible: true)
        var before = [Float](repeating: 0.5, count: 2 * 16)
        before.withUnsafeMutableBufferPointer { declicker.shape($0.baseAddress!, frames: 16, audible: true) }
        #expect(before.allSatisfy { $0 == 0.5 })
        declicker.beginDiscontinuity()
        #expect(declicker.framesToDecay == Self.fade)
        var silence = [Float](repeating: 9, count: 2 * 300)
        silence.withUnsafeMutableBufferPointer { declicker.writeSilence($0.baseAddress!, frames: 300) }
        #expect(abs(silence[0] - 0.5) < 0.01)
        #expect(silence[2 * (Self.fade - 2)] > 0)
        #expect(silence[(2 * Self.fade)...].allSatisfy { $0 == 0 })
        #expect(declicker.framesToDecay == 0)
    }

    @Test("a seek starts the resampler on a sample in phase with a decode from the start, before the target")
    func seekPlanStartsInPhase() {
        // 44.1 kHz to 48 kHz: 147 input samples make 160 output frames.
        let plan = SeekPlan(target: 48_000, rate: 44_100)
        #expect(plan.start % 147 == 0)
        #expect(plan.start < 44_100 - 256)
        #expect(plan.start >= 44_100 - 256 - 147)
        // A frame that starts before the plan's start: cut at the start, drop the output up to the target.
        let cut = plan.cut(position: 0, length: 1024)
        #expect(Int(cut.offset) == plan.start)
        #expect(cut.dropFrames == 48_000 - plan.start / 147 * 160)
        // The same rate in and out: no filter to warm up, every sample in phase.
        let same = SeekPlan(target: 1000, rate: 48_000)
        #expect(same.start == 1000)
        let sameCut = same.cut(position: 900, length: 256)
        #expect(sameCut.offset == 100)
        #expect(sameCut.dropFrames == 0)
    }

    @Test("media skipped between two frames is filled with its length of silence; jitter under 20 ms is not")
    func gapFinderFillsSkippedMedia() {
        var gaps = MediaGapFinder()
        // 48 kHz frames of 960 samples (20 ms).
        #expect(gaps.follow(stated: 0, length: 960, rate: 48_000) == 0)
        #expect(gaps.follow(stated: 960 + 480, length: 960, rate: 48_000) == 0)
        #expect(gaps.take() == nil)
        #expect(gaps.follow(stated: 2400 + 48_000, length: 960, rate: 48_000) == 48_000)
        let gap = gaps.take()
        #expect(gap.map { abs($0.at - 0.05) < 1e-9 && abs($0.seconds - 1) < 1e-9 } == true)
        #expect(gaps.take() == nil)
        // A frame with no timestamp follows on from the one before.
        #expect(gaps.follow(stated: nil, length: 960, rate: 48_000) == 0)
        #expect(gaps.follow(stated: 2400 + 48_000 + 1920, length: 960, rate: 48_000) == 0)
    }
}
