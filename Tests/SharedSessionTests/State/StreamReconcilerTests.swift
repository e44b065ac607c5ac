import Testing

@testable import SharedSession

/// The stream reconciler alone: targets in, the fewest engine calls that reach them out.
@Suite("StreamReconciler: targets → engine calls")
struct StreamReconcilerTests {
    static let policy = SessionPolicy.default
    static let main = StreamID(rawValue: 1)
    static let feed = StreamID(rawValue: 2)

    static func reconciler() -> StreamReconciler {
        var streams = StreamReconciler()
        let open = StreamTarget(gain: 1, paused: false)
        streams.add(
            .init(
                id: main, descriptor: StreamDescriptor(name: "movie", role: .movie), isMain: true, owner: nil,
                volume: 1, applied: open))
        streams.add(
            .init(
                id: feed, descriptor: StreamDescriptor(name: "clip", role: .notification), isMain: false, owner: "feed",
                volume: 0.5, applied: StreamTarget(gain: 0.5, paused: false)))
        return streams
    }

    static func targets(main gain: Float, paused: Bool = false, mutedByHand: Bool = false) -> StreamTargets {
        StreamTargets(
            main: StreamTarget(gain: gain, paused: paused), mutedByHand: mutedByHand, backgroundMusicMuted: false)
    }

    @Test("down ramps by fadeDown (150 ms), up by fadeUp (400 ms); a stream at its target gets no call")
    func rampsByDirection() {
        var streams = Self.reconciler()
        var log = EffectLog()
        streams.settle(Self.targets(main: 0.1), Self.policy, &log)
        #expect(log.take() == [.setGain(Self.main, 0.1, ramp: .milliseconds(150))])
        streams.settle(Self.targets(main: 0.1), Self.policy, &log)
        #expect(log.take() == [])
        streams.settle(Self.targets(main: 0.8, paused: true), Self.policy, &log)
        #expect(log.take() == [.setGain(Self.main, 0.8, ramp: .milliseconds(400)), .setPaused(Self.main, true)])
    }

    @Test("a suspension by hand with renderAnyway mutes every stream, overlays at their own volume after")
    func mutedByHand() {
        var streams = Self.reconciler()
        var log = EffectLog()
        streams.settle(Self.targets(main: 0, mutedByHand: true), Self.policy, &log)
        #expect(
            log.take() == [
                .setGain(Self.main, 0, ramp: .milliseconds(150)), .setGain(Self.feed, 0, ramp: .milliseconds(150)),
            ])
        streams.settle(Self.targets(main: 1), Self.policy, &log)
        #expect(
            log.take() == [
                .setGain(Self.main, 1, ramp: .milliseconds(400)), .setGain(Self.feed, 0.5, ramp: .milliseconds(400)),
            ])
    }

    @Test("a resync after a reconnect tells every stream its gain (as a fade down) and play state again")
    func resyncTellsEverything() {
        var streams = Self.reconciler()
        var log = EffectLog()
        streams.resync(Self.targets(main: 1), Self.policy, &log)
        #expect(
            log.take() == [
                .setGain(Self.main, 1, ramp: .milliseconds(150)), .setPaused(Self.main, false),
                .setGain(Self.feed, 0.5, ramp: .milliseconds(150)), .setPaused(Self.feed, false),
            ])
    }

    @Test("the main stream is found after streams before it close, and is gone once it closes")
    func mainFollowsRemovals() {
        var streams = StreamReconciler()
        let open = StreamTarget(gain: 1, paused: false)
        streams.add(
            .init(
                id: Self.feed, descriptor: StreamDescriptor(name: "clip", role: .notification), isMain: false,
                owner: nil,
                volume: 1, applied: open))
        streams.add(
            .init(
                id: Self.main, descriptor: StreamDescriptor(name: "movie", role: .movie, isExempt: true), isMain: true,
                owner: nil, volume: 1, applied: open))
        #expect(streams.main?.id == Self.main && streams.isMainExempt)
        streams.remove(at: 0)
        #expect(streams.main?.id == Self.main)
        streams.remove(at: 0)
        #expect(streams.main == nil && !streams.isMainExempt)
    }
}
