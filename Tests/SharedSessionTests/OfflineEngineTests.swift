import SharedSession
import SharedSessionTestSupport
import SharedSessionTesting
import Testing

@Suite("Offline engine")
struct OfflineEngineTests {
    @Test(
        "any quantum from 1 to 8192 works, changing between calls, with no gap",
        arguments: [1, 7, 256, 1024, 4096, 8192])
    func anyQuantum(quantum: Int) throws {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        let ramp = (0..<20_000).flatMap { [Float($0) / 20_000, Float($0) / 20_000] }
        let main = try session.openMainStream(source: try PCMBufferSource(samples: ramp))
        var out: [Float] = []
        var sizes = [quantum, 1024, quantum, 4096]
        while out.count < ramp.count {
            let size = min(sizes.removeFirst(), (ramp.count - out.count) / 2)
            sizes.append(size)
            out += try engine.render(frames: size).stem(main.id)
        }
        #expect(out == ramp)
    }

    @Test("quanta outside 1 through 8192 are refused with a typed error", arguments: [0, -1, 8193])
    func badQuantum(frames: Int) {
        let engine = OfflineEngine()
        #expect { _ = try engine.render(frames: frames) } throws: { ($0 as? SessionError)?.code == .quantumOutOfRange }
    }

    @Test("the mix is the sum of the streams and a WAV file round-trips bit for bit")
    func mixAndWAV() throws {
        let engine = OfflineEngine()
        engine.startRecording()
        let session = SharedSession(engine: engine)
        _ = try session.openMainStream(source: try SineSource(frequency: 1000, amplitude: 0.25))
        _ = try session.openStream(
            StreamDescriptor(name: "clip", role: .music), source: try SineSource(frequency: 500, amplitude: 0.25))
        let block = try engine.render(frames: 4800)
        let summed = zip(block.stems.values.first!, block.stems.values.dropFirst().first!).map { $0 + $1 }
        #expect(block.mix == summed)
        let path = "/tmp/sharedsession-test-\(UInt64.random(in: 0...UInt64.max)).wav"
        let recorded = engine.stopRecording()
        try WAVFile.write(recorded, to: path)
        let (format, samples) = try WAVFile.read(from: path)
        #expect(format == .standard)
        #expect(samples == recorded)
    }

    @Test("a voice session captures the input into the session's voice ring")
    func voiceCapture() throws {
        let engine = OfflineEngine(input: try SineSource(frequency: 200, amplitude: 0.3))
        let session = SharedSession(engine: engine)
        _ = try engine.render(frames: 480)
        #expect(session.voiceInput.availableToRead == 0)
        let voice = try session.acquire(.voice, owner: "watch-party")
        _ = try engine.render(frames: 4800)
        let captured = session.voiceInput.readAll()
        #expect(captured.count == 9600)
        #expect(try abs(meter.rms(captured) - LevelMeter.decibels(0.3 / 2.squareRoot())) < 0.05)
        voice.release()
        _ = try engine.render(frames: 480)
        #expect(session.voiceInput.availableToRead == 0)
    }

    @Test("a session that goes away closes its streams and deactivates on the engine")
    func sessionDeinitTidiesEngine() throws {
        let engine = RecordingEngine()
        do {
            let session = SharedSession(engine: engine)
            let lease = try session.acquire(.voice, owner: "watch-party")
            _ = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
            lease.release()
            _ = try session.acquire(.generic, owner: "feed")
        }
        #expect(engine.gains.isEmpty)
        #expect(engine.activeConfiguration == nil)
        #expect(!engine.isCapturing)
    }

    @Test("a host-fed ring plays what the host wrote and silence when it runs dry")
    func ringSource() throws {
        let engine = OfflineEngine()
        let session = SharedSession(engine: engine)
        let source = try RingBufferSource(capacity: 4096)
        let main = try session.openMainStream(source: source)
        source.ring.write([Float](repeating: 0.25, count: 2 * 1000))
        let stem = try engine.render(frames: 1024).stem(main.id)
        #expect(stem[0..<2000].allSatisfy { $0 == 0.25 })
        #expect(stem[2000...].allSatisfy { $0 == 0 })
    }
}
