/// The session leases and the configuration they ask for: which leases are live, which wait for an
/// activation, why a refused one was refused, what the engine last accepted, and the activation in
/// flight. Voice takes precedence: one live voice lease asks for the voice configuration.
///
/// Every operation costs the same however many leases are held: leases are kept by id, with the count
/// of voice leases beside them.
struct LeaseBook: Sendable {
    struct Record: Sendable, Hashable {
        var info: LeaseInfo
        /// Whether the configuration the lease needs was active when it was last checked; a lease
        /// is handed out only once granted.
        var granted: Bool
    }

    /// An activation whose outcome the book waits for.
    struct Activation: Sendable, Hashable {
        let configuration: SessionConfiguration
        /// The cause of the change that asked for it, given to the events its outcome produces.
        let cause: EventCause
        /// The configuration that was active before, to go back to if the capture cannot start.
        let previous: SessionConfiguration?
    }

    private var records: [LeaseID: Record] = [:]
    /// Live voice leases, granted or waiting (the generic ones are the rest of `records`): a counter,
    /// so no input hashes for it.
    private var voiceLeases = 0
    /// Leases waiting for their configuration, oldest first.
    private var waiting: [LeaseID] = []
    /// Why leases were refused, until their acquirer collects it.
    private var refusals: [LeaseID: SessionError] = [:]
    /// The configuration the engine last accepted.
    private(set) var applied: SessionConfiguration?
    /// Whether the engine captures voice input.
    var capturing = false
    private(set) var activation: Activation?

    // MARK: Reading

    var isEmpty: Bool { records.isEmpty }

    /// The live leases (granted or waiting), oldest first.
    var leases: [Record] { records.values.sorted { $0.info.id < $1.info.id } }

    /// `true` for the voice configuration, `false` for the generic one, `nil` for none.
    var requestsVoice: Bool? { records.isEmpty ? nil : voiceLeases > 0 }

    func requested(_ policy: SessionPolicy) -> SessionConfiguration? {
        requestsVoice.map { $0 ? policy.voiceConfiguration : policy.genericConfiguration }
    }

    /// Whether the engine has the configuration asked for. Compared in place: building
    /// ``requested(_:)`` copies a configuration, retaining its strings and sets, every input.
    func isApplied(requestsVoice voice: Bool?, _ policy: SessionPolicy) -> Bool {
        guard let voice else { return applied == nil }
        guard let applied else { return false }
        return applied == (voice ? policy.voiceConfiguration : policy.genericConfiguration)
    }

    func record(_ id: LeaseID) -> Record? { records[id] }

    // MARK: Leases

    /// Adds a lease: granted at once (with its event) if its configuration is active and no one waits
    /// before it, else waiting for the activation the next settle asks for.
    mutating func add(_ info: LeaseInfo, _ policy: SessionPolicy, _ log: inout EffectLog) {
        let id = info.id
        if info.type == .voice { voiceLeases += 1 }
        if waiting.isEmpty, isApplied(requestsVoice: voiceLeases > 0, policy) {
            records[id] = Record(info: info, granted: true)
            log.emit(.leaseAcquired(info), .sessionLease(id, owner: info.owner))
            return
        }
        records[id] = Record(info: info, granted: false)
        waiting.append(id)
        if requested(policy) == applied { grantWaiting(&log) }
    }

    /// Removes a lease, granted or waiting; returns it if it was live.
    @discardableResult
    mutating func remove(_ id: LeaseID) -> LeaseInfo? {
        guard let record = records.removeValue(forKey: id) else { return nil }
        if record.info.type == .voice { voiceLeases -= 1 }
        if !record.granted { waiting.removeAll { $0 == id } }
        return record.info
    }

    /// Refuses a lease that never went in (a unit's limits refused it): its acquirer collects why.
    mutating func refuse(_ id: LeaseID, _ error: SessionError) {
        refusals[id] = error
    }

    /// Takes the reason a lease was refused, if it was. A lease still waiting after its effects were
    /// performed (the session was closed, or the engine refused a switch no lease could be blamed for)
    /// is removed and refused too.
    mutating func takeRefusal(_ id: LeaseID, closed: Bool) -> SessionError? {
        if let refusal = refusals.removeValue(forKey: id) { return refusal }
        guard let record = records[id], !record.granted else { return nil }
        let owner = record.info.owner
        remove(id)
        if closed {
            return SessionError(
                code: .sessionClosed,
                message:
                    "the session is closed, so the session of \(owner) cannot be activated: make a new SharedSession")
        }
        return SessionError(
            code: .activationRefused,
            message:
                "the engine did not settle on a configuration for the session of \(owner): retry, or check the engine")
    }

    mutating func grantWaiting(_ log: inout EffectLog) {
        for id in waiting {
            // A lookup and a plain store: the optional-chained `records[id]?.granted = true` runs
            // through the dictionary's modify coroutines, whose frames are allocated on the heap.
            guard var record = records[id] else { continue }
            record.granted = true
            records[id] = record
            log.emit(.leaseAcquired(record.info), .sessionLease(id, owner: record.info.owner))
        }
        waiting.removeAll(keepingCapacity: true)
    }

    // MARK: Activation

    mutating func begin(_ activation: Activation) {
        self.activation = activation
    }

    /// The activation in flight succeeded: its configuration is the applied one, the waiting leases
    /// are granted if it is the one they ask for, and the change is reported.
    mutating func complete(_ policy: SessionPolicy, _ log: inout EffectLog) {
        guard let activation else { return }
        self.activation = nil
        let previous = applied
        applied = activation.configuration
        if requested(policy) == activation.configuration { grantWaiting(&log) }
        if let previous {
            log.emit(.configurationChanged(from: previous, to: activation.configuration), activation.cause)
        } else {
            log.emit(.activated(activation.configuration), activation.cause)
        }
    }

    /// The activation in flight was refused: the leases waiting for its configuration are refused and
    /// removed. Returns whether any was.
    mutating func refuseActivation(message: String, _ policy: SessionPolicy, _ log: inout EffectLog) -> Bool {
        guard let activation else { return false }
        self.activation = nil
        let configuration = activation.configuration
        let refused = waiting.filter { id in
            records[id].map { policy.configuration(for: $0.info.type) == configuration } ?? false
        }
        for id in refused {
            guard let info = remove(id) else { continue }
            refusals[id] = SessionError(
                code: .activationRefused,
                message: "the engine refused to activate \(configuration) for the \(info.type) session "
                    + "of \(info.owner): \(message); fall back to another engine or retry later")
        }
        log.emit(.activationFailed(configuration, message: message), activation.cause)
        return !refused.isEmpty
    }

    /// The engine was deactivated (the last lease went, or the session closed).
    mutating func deactivated() {
        applied = nil
    }
}
