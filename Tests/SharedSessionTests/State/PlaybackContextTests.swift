import Testing

@testable import SharedSession

/// The playback context alone: platform events and the host's play in, the interruption phase and
/// the events out.
@Suite("PlaybackContext: platform events → phase and events")
struct PlaybackContextTests {
    static func emitted(_ kind: SessionEvent.Kind, _ cause: EventCause) -> SessionEffect {
        .emit(SessionEvent(kind, cause: cause))
    }

    @Test("an interruption ended without shouldResume waits for the host through a later one that resumes")
    func waitingForHostIsStored() {
        var context = PlaybackContext()
        var log = EffectLog()
        #expect(context.handle(.interruptionBegan, &log))
        #expect(context.phase == .interrupted)
        #expect(context.handle(.interruptionEnded(shouldResume: false), &log))
        #expect(context.phase == .endedWaitingForHost)
        #expect(context.handle(.interruptionBegan, &log))
        #expect(context.phase == .interrupted && context.waitsForHost)
        #expect(context.handle(.interruptionEnded(shouldResume: true), &log))
        #expect(context.phase == .endedWaitingForHost)
        _ = log.take()
        context.play(&log)
        #expect(context.phase == .none)
        #expect(log.take() == [Self.emitted(.interruptionEnded(shouldResume: true), .host)])
    }

    @Test("an end without a beginning, a second background and an unchanged other-audio do not apply")
    func eventsThatDoNotApply() {
        var context = PlaybackContext()
        var log = EffectLog()
        #expect(!context.handle(.interruptionEnded(shouldResume: true), &log))
        #expect(context.handle(.didEnterBackground, &log))
        #expect(!context.handle(.didEnterBackground, &log))
        #expect(!context.handle(.otherAudioStopped, &log))
        #expect(log.take() == [Self.emitted(.backgroundChanged(isInBackground: true), .system(.didEnterBackground))])
    }

    @Test("coming back to the foreground lifts an interruption whose end never came")
    func foregroundLiftsInterruption() {
        var context = PlaybackContext()
        var log = EffectLog()
        _ = context.handle(.interruptionBegan, &log)
        _ = log.take()
        #expect(context.handle(.willEnterForeground, &log))
        #expect(context.phase == .none)
        #expect(
            log.take() == [
                Self.emitted(.interruptionEnded(shouldResume: true), .system(.willEnterForeground))
            ])
    }

    @Test("the old device going away pauses the host's playback and reports the route")
    func oldDeviceUnavailablePauses() {
        var context = PlaybackContext()
        var log = EffectLog()
        let change = RouteChange(reason: .oldDeviceUnavailable, previousOutput: "headphones", currentOutput: "speaker")
        #expect(context.handle(.routeChanged(change), &log))
        #expect(!context.hostWantsPlay)
        #expect(context.currentRoute == "speaker")
        #expect(log.take() == [Self.emitted(.routeChanged(change), .system(.routeChanged(change)))])
    }
}
