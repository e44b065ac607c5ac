import Testing

@testable import SharedSession

/// The lease book alone: leases in, the configuration they ask for and the events of granting and
/// refusing them out. No engine, no streams.
@Suite("LeaseBook: leases → requested configuration")
struct LeaseBookTests {
    static let t0 = ContinuousClock.now
    static let policy = SessionPolicy.default

    static func lease(_ id: UInt64, _ owner: String, _ type: AudioSessionType) -> LeaseInfo {
        LeaseInfo(id: LeaseID(rawValue: id), owner: owner, type: type, acquiredAt: t0)
    }

    static func emitted(_ kind: SessionEvent.Kind, _ cause: EventCause) -> SessionEffect {
        .emit(SessionEvent(kind, cause: cause))
    }

    @Test("voice takes precedence: one voice lease among generic ones asks for the voice configuration")
    func voiceTakesPrecedence() {
        var book = LeaseBook()
        var log = EffectLog()
        #expect(book.requestsVoice == nil)
        book.add(Self.lease(1, "host", .generic), Self.policy, &log)
        #expect(book.requested(Self.policy) == .generic)
        book.add(Self.lease(2, "party", .voice), Self.policy, &log)
        #expect(book.requested(Self.policy) == .voice)
        book.remove(LeaseID(rawValue: 2))
        #expect(book.requested(Self.policy) == .generic)
        book.remove(LeaseID(rawValue: 1))
        #expect(book.requested(Self.policy) == nil)
        #expect(log.take() == [])
    }

    @Test("a lease waits for its activation; the activation grants it, then reports it, in that order")
    func activationGrantsWaiting() {
        var book = LeaseBook()
        var log = EffectLog()
        let info = Self.lease(1, "feed", .generic)
        book.add(info, Self.policy, &log)
        #expect(log.take() == [])
        #expect(book.record(info.id)?.granted == false)
        let cause = EventCause.sessionLease(info.id, owner: "feed")
        book.begin(.init(configuration: .generic, cause: cause, previous: nil))
        book.complete(Self.policy, &log)
        #expect(
            log.take() == [
                Self.emitted(.leaseAcquired(info), cause), Self.emitted(.activated(.generic), cause),
            ])
        #expect(book.record(info.id)?.granted == true)
        #expect(book.applied == .generic)
        #expect(book.activation == nil)
    }

    @Test("a lease whose configuration is active is granted at once, with its event")
    func grantedAtOnce() {
        var book = LeaseBook()
        var log = EffectLog()
        book.add(Self.lease(1, "host", .generic), Self.policy, &log)
        book.begin(.init(configuration: .generic, cause: .host, previous: nil))
        book.complete(Self.policy, &log)
        _ = log.take()
        let second = Self.lease(2, "feed", .generic)
        book.add(second, Self.policy, &log)
        #expect(log.take() == [Self.emitted(.leaseAcquired(second), .sessionLease(second.id, owner: "feed"))])
    }

    @Test("a refused activation refuses and removes only the leases waiting for that configuration")
    func refusedActivation() {
        var book = LeaseBook()
        var log = EffectLog()
        book.add(Self.lease(1, "party", .voice), Self.policy, &log)
        let cause = EventCause.sessionLease(LeaseID(rawValue: 1), owner: "party")
        book.begin(.init(configuration: .voice, cause: cause, previous: nil))
        #expect(book.refuseActivation(message: "busy", Self.policy, &log))
        #expect(log.take() == [Self.emitted(.activationFailed(.voice, message: "busy"), cause)])
        #expect(book.requested(Self.policy) == nil)
        let refusal = book.takeRefusal(LeaseID(rawValue: 1), closed: false)
        #expect(refusal?.code == .activationRefused)
        #expect(refusal?.message.contains("busy") == true)
        #expect(book.takeRefusal(LeaseID(rawValue: 1), closed: false) == nil)
    }

    @Test("a lease still waiting when its acquirer asks is refused, as closed when the session is")
    func waitingLeaseRefusedOnAsk() {
        var book = LeaseBook()
        var log = EffectLog()
        book.add(Self.lease(1, "feed", .generic), Self.policy, &log)
        #expect(book.takeRefusal(LeaseID(rawValue: 1), closed: true)?.code == .sessionClosed)
        #expect(book.isEmpty)
    }
}
