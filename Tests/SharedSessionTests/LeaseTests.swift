import SharedSession
import SharedSessionTesting
import Testing

@Suite("Leases and session precedence")
struct LeaseTests {
    let engine = RecordingEngine()
    let session: SharedSession
    let delegate = RecordingDelegate()

    init() {
        session = SharedSession(engine: engine)
        session.delegate = delegate
    }

    @Test("first generic lease activates the generic configuration and the last release deactivates")
    func genericActivatesAndDeactivates() throws {
        let lease = try session.acquire(.generic, owner: "feed")
        #expect(session.snapshot.activeConfiguration == .generic)
        #expect(engine.activeConfiguration == .generic)
        lease.release()
        #expect(session.snapshot.activeConfiguration == nil)
        #expect(engine.calls.contains(.deactivate(notifyingOthers: true)))
    }

    @Test("second release is a no-op that is logged, never a negative count")
    func doubleReleaseIsIgnored() throws {
        let first = try session.acquire(.generic, owner: "feed")
        let second = try session.acquire(.generic, owner: "notifications")
        first.release()
        first.release()
        #expect(session.snapshot.genericCount == 1)
        #expect(session.snapshot.isActive)
        #expect(delegate.kinds.contains(.releaseIgnored(owner: "feed", what: "generic \(first.id) released twice")))
        second.release()
        #expect(session.snapshot.genericCount == 0)
        #expect(!session.snapshot.isActive)
    }

    @Test("snapshot names the owners of live leases with type and age")
    func snapshotNamesOwners() throws {
        let before = ContinuousClock.now
        let feed = try session.acquire(.generic, owner: "feed")
        let chat = try session.acquire(.voice, owner: "watch-party")
        let snapshot = session.snapshot
        let after = ContinuousClock.now
        #expect(snapshot.owners == ["feed", "watch-party"])
        #expect(snapshot.leases.map(\.type) == [.generic, .voice])
        // Each age is the time from the lease's acquisition to the snapshot, both read within this test.
        #expect(snapshot.leases.allSatisfy { $0.acquiredAt >= before && $0.acquiredAt <= snapshot.takenAt })
        #expect(snapshot.takenAt <= after)
        #expect(snapshot.leases.allSatisfy { snapshot.age(of: $0) == snapshot.takenAt - $0.acquiredAt })
        #expect(snapshot.leases[0].acquiredAt <= snapshot.leases[1].acquiredAt, "the older lease is the older")
        #expect(snapshot.leases.allSatisfy { snapshot.age(of: $0) <= after - before })
        feed.release()
        chat.release()
    }

    @Test("a lease dropped without release is released at once, naming its owner")
    func droppedLeaseIsReleased() throws {
        do {
            _ = try session.acquire(.generic, owner: "leaky-sdk")
        }
        #expect(!session.snapshot.isActive)
        #expect(
            delegate.kinds.contains {
                if case .leaseDropped(let info) = $0 { info.owner == "leaky-sdk" } else { false }
            })
    }

    @Test("voice takes precedence over generic")
    func voiceTakesPrecedence() throws {
        let generic = try session.acquire(.generic, owner: "feed")
        let voice = try session.acquire(.voice, owner: "watch-party")
        #expect(session.snapshot.activeConfiguration == .voice)
        #expect(engine.isCapturing)
        let another = try session.acquire(.generic, owner: "notifications")
        #expect(session.snapshot.activeConfiguration == .voice)
        voice.release()
        generic.release()
        another.release()
    }

    @Test("last voice released while generic remains goes back to generic without deactivating")
    func voiceReleaseReturnsToGeneric() throws {
        let generic = try session.acquire(.generic, owner: "feed")
        let voice = try session.acquire(.voice, owner: "watch-party")
        engine.removeAllCalls()
        delegate.removeAll()
        voice.release()
        #expect(session.snapshot.activeConfiguration == .generic)
        #expect(!engine.calls.contains { if case .deactivate = $0 { true } else { false } })
        #expect(!engine.isCapturing)
        // Exactly two events, in this order: the release, then the change to generic.
        let info = try #require(voiceInfo(voice))
        #expect(delegate.kinds == [.leaseReleased(info), .configurationChanged(from: .voice, to: .generic)])
        generic.release()
    }

    @Test("releasing the generic with a voice held keeps the session active (the sample's generic + generic bug)")
    func genericReleaseKeepsVoice() throws {
        let voice = try session.acquire(.voice, owner: "watch-party")
        let generic = try session.acquire(.generic, owner: "feed")
        generic.release()
        #expect(session.snapshot.activeConfiguration == .voice)
        #expect(engine.activeConfiguration == .voice)
        voice.release()
        #expect(!session.snapshot.isActive)
    }

    @Test("last release emits the release and exactly one deactivation")
    func lastReleaseEvents() throws {
        let voice = try session.acquire(.voice, owner: "watch-party")
        delegate.removeAll()
        voice.release()
        let info = try #require(voiceInfo(voice))
        #expect(delegate.kinds == [.leaseReleased(info), .deactivated(notifiedOthers: true)])
    }

    @Test("same owner may hold several leases; events fire only on real changes")
    func sameOwnerSeveralLeases() throws {
        let a = try session.acquire(.generic, owner: "feed")
        let b = try session.acquire(.generic, owner: "feed")
        #expect(delegate.kinds.filter { if case .activated = $0 { true } else { false } }.count == 1)
        a.release()
        #expect(session.snapshot.isActive)
        b.release()
        #expect(delegate.kinds.filter { if case .deactivated = $0 { true } else { false } }.count == 1)
    }

    @Test("session leases never change the main stream's gain or play state")
    func leasesDoNotTouchMain() throws {
        let main = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5))
        engine.removeAllCalls()
        let voice = try session.acquire(.voice, owner: "watch-party")
        voice.release()
        #expect(!engine.calls.contains { if case .setGain(main.id, _, _) = $0 { true } else { false } })
        #expect(!engine.calls.contains { if case .setPaused(main.id, _) = $0 { true } else { false } })
    }

    @Test("after close, acquiring or opening a stream is refused with sessionClosed and nothing is held")
    func closedSessionRefuses() throws {
        session.close()
        #expect { _ = try session.acquire(.generic, owner: "feed") } throws: {
            ($0 as? SessionError)?.code == .sessionClosed
        }
        #expect { _ = try session.openMainStream(source: try SineSource(frequency: 440, amplitude: 0.5)) } throws: {
            ($0 as? SessionError)?.code == .sessionClosed
        }
        #expect(session.snapshot.leases.isEmpty)
        #expect(session.snapshot.streams.isEmpty)
        #expect(engine.activeConfiguration == nil)
    }

    private func voiceInfo(_ lease: SessionLease) -> LeaseInfo? {
        delegate.events.compactMap { event -> LeaseInfo? in
            switch event.kind {
            case .leaseReleased(let info) where info.id == lease.id: info
            default: nil
            }
        }.first
    }
}
