import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

@Suite("Configuration and value validation")
struct ValidationTests {
    @Test(
        "options valid only with playAndRecord are refused with other categories, naming option and category",
        arguments: [AudioSessionCategoryOptions.defaultToSpeaker, .allowBluetooth, .allowBluetoothA2DP])
    func playAndRecordOnlyOptions(option: AudioSessionCategoryOptions) throws {
        for category in [AudioSessionCategory.ambient, .soloAmbient, .playback, .record] {
            #expect {
                _ = try SessionConfiguration(category: category, options: option)
            } throws: { error in
                let error = error as? SessionError
                return error?.code == .invalidConfiguration && error!.message.contains("\(category)")
                    && error!.message.contains(option.description.dropFirst().dropLast())
            }
        }
        _ = try SessionConfiguration(category: .playAndRecord, options: option)
    }

    @Test(
        "mixWithOthers and duckOthers only with playback or playAndRecord",
        arguments: [AudioSessionCategoryOptions.mixWithOthers, .duckOthers])
    func mixingOptions(option: AudioSessionCategoryOptions) throws {
        for category in [AudioSessionCategory.ambient, .soloAmbient, .record] {
            #expect(throws: SessionError.self) { _ = try SessionConfiguration(category: category, options: option) }
        }
        _ = try SessionConfiguration(category: .playback, options: option)
        _ = try SessionConfiguration(category: .playAndRecord, options: option)
    }

    @Test("modes are checked against the category")
    func modes() throws {
        #expect(throws: SessionError.self) { _ = try SessionConfiguration(category: .playback, mode: .voiceChat) }
        #expect(throws: SessionError.self) {
            _ = try SessionConfiguration(category: .playAndRecord, mode: .moviePlayback)
        }
        _ = try SessionConfiguration(category: .playAndRecord, mode: .videoChat)
        _ = try SessionConfiguration(category: .ambient, mode: .default)
    }

    @Test(
        "NaN, infinite, negative and above-1 volumes are rejected, and nothing held is lost",
        arguments: [Float.nan, .infinity, -.infinity, -0.1, 1.01])
    func badVolumes(value: Float) throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let lease = try session.acquire(.generic, owner: "feed")
        let duck = session.duck(owner: "feed")
        try session.setMainVolume(0.7)
        #expect(throws: SessionError.self) { try session.setMainVolume(value) }
        session.mainVolume = value
        #expect(throws: SessionError.self) { _ = try session.duck(owner: "feed", level: value) }
        #expect(throws: SessionError.self) { _ = try SessionPolicy(duckLevel: value) }
        let snapshot = session.snapshot
        #expect(snapshot.mainVolume == 0.7)
        #expect(snapshot.ducks.count == 1)
        #expect(snapshot.genericCount == 1)
        lease.release()
        duck.release()
    }

    @Test("bad fades and sources are typed errors")
    func badFadesAndSources() {
        #expect(throws: SessionError.self) { _ = try SessionPolicy(fadeDown: .milliseconds(-1)) }
        #expect(throws: SessionError.self) { _ = try SessionPolicy(fadeUp: .seconds(11)) }
        #expect(throws: SessionError.self) { _ = try SineSource(frequency: 30_000, amplitude: 0.5) }
        #expect(throws: SessionError.self) { _ = try PCMBufferSource(samples: [0.1, .nan]) }
        #expect(throws: SessionError.self) { _ = try PCMBufferSource(samples: [0.1, 0.2, 0.3]) }
    }

    @Test("a second main stream is refused and the first keeps playing")
    func secondMainRefused() throws {
        let scene = try OfflineScene()
        #expect {
            _ = try scene.session.openMainStream(source: try SineSource(frequency: 200, amplitude: 0.1))
        } throws: { ($0 as? SessionError)?.code == .mainStreamAlreadyOpen }
        #expect(abs(try scene.mainLevel(after: 200) - fullLevel) < 0.01)
    }
}
