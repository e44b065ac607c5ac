import SharedSession
import SharedSessionTesting
import Testing

@Suite("Events carry their reason")
struct EventTests {
    @Test("every volume and state change is an event naming the lease or system event behind it")
    func changesNameTheirCause() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        _ = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        let duck = session.duck(owner: "feed")
        #expect(
            delegate.events.contains(
                SessionEvent(.mainGainChanged(from: 1, to: 0.1), cause: .duckLease(duck.id, owner: "feed"))))
        try session.setMainVolume(0.5)
        #expect(delegate.events.contains(SessionEvent(.mainVolumeChanged(from: 1, to: 0.5), cause: .host)))
        #expect(delegate.events.contains(SessionEvent(.mainGainChanged(from: 0.1, to: 0.05), cause: .host)))
        session.handle(.interruptionBegan)
        #expect(delegate.events.contains(SessionEvent(.renderingSuspended(true), cause: .system(.interruptionBegan))))
        let voice = try session.acquire(.voice, owner: "watch-party")
        #expect(
            delegate.events.contains(
                SessionEvent(.activated(.voice), cause: .sessionLease(voice.id, owner: "watch-party"))))
        duck.release()
        #expect(
            delegate.events.contains(
                SessionEvent(.mainGainChanged(from: 0.05, to: 0.5), cause: .duckLease(duck.id, owner: "feed"))))
        voice.release()
        #expect(
            delegate.events.last
                == SessionEvent(
                    .deactivated(notifiedOthers: true), cause: .sessionLease(voice.id, owner: "watch-party")))
    }

    @Test("every subscriber gets every event, in the same order")
    func everySubscriberGetsEverything() async throws {
        let session = SharedSession(engine: RecordingEngine())
        let first = session.events
        let second = session.events
        let lease = try session.acquire(.generic, owner: "feed")
        let duck = session.duck(owner: "feed")
        duck.release()
        lease.release()
        session.close()
        var a: [SessionEvent] = []
        var b: [SessionEvent] = []
        for await event in first { a.append(event) }
        for await event in second { b.append(event) }
        #expect(a == b)
        #expect(a.count >= 7)
    }

    @Test("engine faults, connection loss and reconnection are events and keep every lease")
    func engineFaultsKeepLeases() throws {
        let engine = RecordingEngine()
        let session = SharedSession(engine: engine)
        let delegate = RecordingDelegate()
        session.delegate = delegate
        let main = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        let lease = try session.acquire(.voice, owner: "watch-party")
        let duck = session.duck(owner: "watch-party")
        engine.emit(.connectionLost(reason: "EPIPE"))
        #expect(!session.snapshot.isEngineConnected)
        engine.emit(.reconnected(attempts: 3, downtime: .milliseconds(300)))
        #expect(session.snapshot.isEngineConnected)
        #expect(session.snapshot.leases.count == 1)
        #expect(session.snapshot.isDucked)
        #expect(engine.gains[main.id] == 0.1)
        engine.emit(.streamFault(stream: main.id, reason: "paused by the server"))
        engine.emit(.externalVolumeChange(stream: main.id, volume: 0.4))
        #expect(session.snapshot.mainVolume == 0.4)
        #expect(abs(session.snapshot.mainGain - 0.04) < 1e-6)
        let kinds = delegate.kinds
        #expect(kinds.contains(.connectionLost(reason: "EPIPE")))
        #expect(kinds.contains(.reconnected(attempts: 3, downtime: .milliseconds(300))))
        #expect(kinds.contains(.streamFault(main.id, reason: "paused by the server")))
        duck.release()
        lease.release()
    }
}

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
            out += try engine.render(frames: size).stems[main.id]!
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
        #expect(
            abs(meter.rms(captured) - LevelMeter.decibels(0.3 / 2.squareRoot())) < 0.05)
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
        let stem = try engine.render(frames: 1024).stems[main.id]!
        #expect(stem[0..<2000].allSatisfy { $0 == 0.25 })
        #expect(stem[2000...].allSatisfy { $0 == 0 })
    }
}

@Suite("Units named in events")
struct UnitCauseTests {
    @Test("a unit's stream and a bridge's unbalanced call name the unit as the cause")
    func unitIsTheCause() throws {
        let session = SharedSession(engine: RecordingEngine())
        let delegate = RecordingDelegate()
        session.delegate = delegate
        let clip = try session.openStream(
            StreamDescriptor(name: "clip", role: .music), source: try SineSource(frequency: 880, amplitude: 0.3),
            owner: "social-feed")
        try clip.setVolume(0.5)
        clip.close()
        OverlayAudioBridge(session: session, owner: "watch-party").disableAudioDucking()
        let causes = delegate.events.map(\.cause)
        #expect(
            causes == [
                .unit(owner: "social-feed"), .unit(owner: "social-feed"), .unit(owner: "social-feed"),
                .unit(owner: "watch-party"),
            ])
        #expect(session.snapshot.streams.isEmpty)
    }
}
