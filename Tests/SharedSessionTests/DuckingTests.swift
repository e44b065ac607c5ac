import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

/// Ducking measured in what the offline engine rendered.
@Suite("Stacked ducking with exact restore and click-free ramps")
struct DuckingTests {
    @Test("a duck is a 20 dB drop of the main stream reached within the fade time plus one quantum")
    func duckDropsTwentyDecibels() throws {
        let scene = try OfflineScene(signal: .constant)
        _ = try scene.renderMain(milliseconds: 100)
        let duck = scene.session.duck(owner: "feed")
        let stem = try scene.renderMain(milliseconds: 400)
        let fadeFrames = 7200
        let reached = try #require(try meter.firstFrame(stem, atOrBelow: 0.05 * 1.0001))
        print(
            "duck reached -20 dB after \(reached) frames (\(Double(reached) / 48) ms); fade \(fadeFrames) + quantum 1024"
        )
        #expect(reached <= fadeFrames + 1024)
        #expect(try abs(meter.rms(stem, lastMilliseconds: 100) - LevelMeter.decibels(0.05)) < 0.01)
        duck.release()
    }

    @Test("ducked level is -20 dB on a sine and the restore comes back within 0.1 dB")
    func duckAndRestoreLevels() throws {
        let scene = try OfflineScene()
        let before = try scene.mainLevel(after: 200)
        let duck = scene.session.duck(owner: "feed")
        let ducked = try scene.mainLevel(after: 400)
        duck.release()
        let restored = try scene.mainLevel(after: 600)
        print("main \(before) dBFS, ducked \(ducked) dBFS, restored \(restored) dBFS")
        #expect(abs(before - fullLevel) < 0.01)
        #expect(abs((before - ducked) - 20) < 0.05)
        #expect(abs(restored - before) < 0.1)
    }

    @Test("no sample-to-sample jump larger than the ramp allows")
    func rampsAreClickFree() throws {
        let scene = try OfflineScene(signal: .constant)
        _ = try scene.renderMain(milliseconds: 50)
        let duck = scene.session.duck(owner: "feed")
        var stem = try scene.renderMain(milliseconds: 60)
        duck.release()
        stem += try scene.renderMain(milliseconds: 500)
        // 0.5 × the whole 0.9 gain span over the 150 ms fade-down is the steepest slope allowed.
        let allowed: Float = 0.5 * 0.9 / 7200 * 1.001
        #expect(try meter.largestStep(stem) <= allowed)
        #expect(abs(stem.last! - 0.5) < 1e-5)
    }

    @Test("a ramp interrupted by a new request continues from the level reached")
    func interruptedRampContinues() throws {
        let scene = try OfflineScene(signal: .constant)
        _ = try scene.renderMain(milliseconds: 50)
        let duck = scene.session.duck(owner: "feed")
        let down = try scene.renderMain(milliseconds: 64)
        let reached = down.last!
        #expect(reached < 0.5 && reached > 0.05)
        duck.release()
        let up = try scene.renderMain(milliseconds: 10)
        #expect(abs(up[0] - reached) <= 0.5 * 0.9 / 7200 * 1.001)
        #expect(up.last! > reached)
    }

    @Test("further ducks don't compound and ducks release in any order; the last one restores")
    func stackedDucks() throws {
        let scene = try OfflineScene()
        let base = try scene.mainLevel(after: 200)
        let feed = scene.session.duck(owner: "feed")
        let chat = scene.session.duck(owner: "watch-party")
        let note = scene.session.duck(owner: "notifications")
        #expect(scene.session.snapshot.duckFactor == 0.1)
        let ducked = try scene.mainLevel(after: 400)
        #expect(abs((base - ducked) - 20) < 0.05)
        feed.release()
        #expect(abs(try scene.mainLevel(after: 500) - ducked) < 0.01)
        note.release()
        #expect(abs(try scene.mainLevel(after: 500) - ducked) < 0.01)
        chat.release()
        #expect(abs(try scene.mainLevel(after: 600) - base) < 0.1)
    }

    @Test("a volume change while ducked is heard as new × level and the restore goes to the new volume")
    func volumeChangeWhileDucked() throws {
        let scene = try OfflineScene()
        scene.session.mainVolume = 0.8
        let duck = scene.session.duck(owner: "watch-party")
        _ = try scene.renderMain(milliseconds: 400)
        try scene.session.setMainVolume(0.5)
        let ducked = try scene.mainLevel(after: 600)
        #expect(abs(ducked - (fullLevel + LevelMeter.decibels(0.05))) < 0.05)
        duck.release()
        let restored = try scene.mainLevel(after: 600)
        #expect(abs(restored - (fullLevel + LevelMeter.decibels(0.5))) < 0.1)
        #expect(scene.session.snapshot.mainGain == 0.5)
    }

    @Test("a duck may name its own level; the lowest live level applies")
    func customLevels() throws {
        let scene = try OfflineScene()
        let light = try scene.session.duck(owner: "notifications", level: 0.5)
        #expect(scene.session.snapshot.duckFactor == 0.5)
        let deep = scene.session.duck(owner: "watch-party")
        #expect(scene.session.snapshot.duckFactor == 0.1)
        deep.release()
        #expect(scene.session.snapshot.duckFactor == 0.5)
        light.release()
        #expect(scene.session.snapshot.duckFactor == 1)
    }

    @Test("the main stream opened while ducked starts at the ducked gain, with no flash")
    func mainOpenedWhileDucked() throws {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        let duck = session.duck(owner: "feed")
        let main = try session.openMainStream(source: try PCMBufferSource(samples: [0.5, 0.5], loops: true))
        let stem = try engine.render(frames: 256).stem(main.id)
        #expect(stem.allSatisfy { abs($0 - 0.05) < 1e-6 })
        duck.release()
    }

    @Test("re-activating the session does not clear a live duck")
    func reactivationKeepsDuck() throws {
        let scene = try OfflineScene()
        let duck = scene.session.duck(owner: "watch-party")
        let lease = try scene.session.acquire(.generic, owner: "feed")
        lease.release()
        let again = try scene.session.acquire(.voice, owner: "watch-party")
        #expect(scene.session.snapshot.isDucked)
        #expect(abs(try scene.mainLevel(after: 400) - (fullLevel - 20)) < 0.05)
        again.release()
        duck.release()
    }

    @Test("closing the session while ducked writes no further gain to the main stream")
    func closeWhileDucked() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let main = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        let duck = session.duck(owner: "feed")
        session.close()
        engine.removeAllCalls()
        duck.release()
        session.mainVolume = 0.3
        #expect(!engine.calls.contains { if case .setGain(main.id, _, _) = $0 { true } else { false } })
    }
}
