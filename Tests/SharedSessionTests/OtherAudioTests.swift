import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

@Suite("Other audio and background music")
struct OtherAudioTests {
    @Test("other audio raises the hint and mutes background music under a mixable category, then lifts it")
    func backgroundMusicMute() throws {
        let scene = try OfflineScene()
        let music = try scene.session.openStream(
            StreamDescriptor(name: "lobby-music", role: .music, isBackgroundMusic: true),
            source: try SineSource(frequency: 300, amplitude: 0.5))
        let clip = try scene.session.openStream(
            StreamDescriptor(name: "clip", role: .music), source: try SineSource(frequency: 600, amplitude: 0.5),
            volume: 0.5)
        let lease = try scene.session.acquire(.generic, owner: "host")
        scene.session.handle(.otherAudioStarted)
        let snapshot = scene.session.snapshot
        #expect(snapshot.isOtherAudioPlaying)
        #expect(snapshot.secondaryAudioShouldBeSilencedHint)
        #expect(snapshot.isBackgroundMusicMuted)
        let during = try scene.engine.render(duration: .milliseconds(400))
        #expect(try meter.rms(during.stem(music.id), lastMilliseconds: 100) < -120)
        #expect(try abs(meter.rms(during.stem(clip.id), lastMilliseconds: 100) - (fullLevel - 6.0206)) < 0.05)
        #expect(try abs(meter.rms(during.stem(scene.main.id), lastMilliseconds: 100) - fullLevel) < 0.05)
        scene.session.handle(.otherAudioStopped)
        let after = try scene.engine.render(duration: .milliseconds(600))
        #expect(try abs(meter.rms(after.stem(music.id), lastMilliseconds: 100) - fullLevel) < 0.1)
        #expect(!scene.session.snapshot.secondaryAudioShouldBeSilencedHint)
        lease.release()
    }

    @Test("a non-mixable category does not mute background music")
    func nonMixableKeepsMusic() throws {
        let policy = try SessionPolicy(genericConfiguration: SessionConfiguration(category: .soloAmbient))
        let scene = try OfflineScene(policy: policy)
        let lease = try scene.session.acquire(.generic, owner: "host")
        scene.session.handle(.otherAudioStarted)
        #expect(scene.session.snapshot.secondaryAudioShouldBeSilencedHint)
        #expect(!scene.session.snapshot.isBackgroundMusicMuted)
        lease.release()
    }

    @Test("other audio does not duck the main stream unless the policy asks")
    func otherAudioDuckPolicy() throws {
        let plain = try OfflineScene()
        plain.session.handle(.otherAudioStarted)
        #expect(!plain.session.snapshot.isDucked)
        let ducking = try OfflineScene(policy: try SessionPolicy(duckWhenOtherAudioPlays: true))
        ducking.session.handle(.otherAudioStarted)
        #expect(ducking.session.snapshot.duckFactor == 0.1)
        let duck = ducking.session.duck(owner: "feed")
        #expect(ducking.session.snapshot.duckFactor == 0.1)
        ducking.session.handle(.otherAudioStopped)
        duck.release()
        #expect(!ducking.session.snapshot.isDucked)
    }
}
