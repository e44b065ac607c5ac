import Foundation
import SharedSession
import SharedSessionRemote
import SharedSessionTestSupport
import Synchronization
import Testing

/// Every suite of the target, one at a time: the kill schedules time the release against a render
/// quantum, and the flood test loads the CPU on purpose.
@Suite("SharedSessionRemote", .serialized)
enum RemoteTests {
    /// How long after its kill a unit's death may take to reach the host: a behaviour bound (a movie left
    /// ducked this long after its caller died is heard stuck), at least 5× the quiet machine's worst
    /// figure so a loaded machine keeps it. The figures themselves are `[measure]` lines, and
    /// `Benchmarks/run` publishes them over many runs.
    static let deathBound = Duration.milliseconds(500)
}

/// Median, worst and every value of a run of figures in milliseconds, as a `[measure]` line prints them.
struct Spread: CustomStringConvertible {
    let sorted: [Double]

    init(_ values: [Double]) { sorted = values.sorted() }

    init(_ durations: [Duration]) { self.init(durations.map { $0.inSeconds * 1000 }) }

    var median: Double { sorted.isEmpty ? .nan : sorted[sorted.count / 2] }
    var worst: Double { sorted.last ?? .nan }

    var description: String {
        let all = sorted.map { String(format: "%.2f", $0) }.joined(separator: " ")
        return String(format: "median %.2f ms, worst %.2f ms (n = %d: ", median, worst, sorted.count) + all + ")"
    }
}

/// A host on the offline engine serving its session: the main stream a constant 0.5, a server on a
/// socket of its own, and every input the session received with its time.
final class RemoteRig: SessionInputObserver {
    let scene: OfflineScene
    let server: SessionServer
    private let received = Mutex<[(input: SessionInput, at: ContinuousClock.Instant)]>([])

    var session: SharedSession { scene.session }

    init(
        _ name: String, policy: SessionPolicy = .default, access: RemoteAccessPolicy = .sameUser(),
        limits: SessionServer.Limits = .init()
    ) throws {
        scene = try OfflineScene(policy: policy, signal: .constant)
        server = try SessionServer(session: scene.session, path: socketPath(name), access: access, limits: limits)
        scene.session.addInputObserver(self)
    }

    deinit { server.close() }

    func session(_ session: SharedSession, received input: SessionInput, at time: ContinuousClock.Instant) {
        received.withLock { $0.append((input, time)) }
    }

    /// When the session took `unitReleased` for `owner` (the last of what its connection gave back).
    func unitReleased(_ owner: String) -> ContinuousClock.Instant? {
        received.withLock { inputs in
            inputs.last { if case .unitReleased(owner, _) = $0.input.request { true } else { false } }?.at
        }
    }

    /// When the session took the release of the duck `id`.
    func duckReleased(_ id: LeaseID) -> ContinuousClock.Instant? {
        received.withLock { inputs in
            inputs.last { if case .releaseDuck(id, _) = $0.input.request { true } else { false } }?.at
        }
    }

    /// The `unitReleased` reasons the session took for `owner`.
    func releaseReasons(_ owner: String) -> [String] {
        received.withLock { inputs in
            inputs.compactMap { if case .unitReleased(owner, let reason) = $0.input.request { reason } else { nil } }
        }
    }

    /// How many releases with nothing to release the session took for `owner`.
    func ignoredReleases(_ owner: String) -> Int {
        received.withLock { inputs in
            inputs.count { if case .ignoredRelease(owner, _, _) = $0.input.request { true } else { false } }
        }
    }

    /// How many ducks the session granted `owner` (taken by the session, whatever the unit heard of it).
    func ducksGranted(_ owner: String) -> Int {
        received.withLock { inputs in
            inputs.count {
                if case .duck(let request) = $0.input.request {
                    request.owner == owner && $0.input.lease != nil
                } else {
                    false
                }
            }
        }
    }

    /// The releases the session took, in order, by kind: `releaseDuck`, `releaseLease`, `unitReleased`.
    func releaseOrder() -> [String] {
        received.withLock { inputs in
            inputs.compactMap {
                switch $0.input.request {
                case .releaseDuck: "releaseDuck"
                case .releaseLease: "releaseLease"
                case .unitReleased: "unitReleased"
                default: nil
                }
            }
        }
    }

    func forgetInputs() { received.withLock { $0.removeAll() } }

    /// Starts a unit process connected as `owner`, and waits for its welcome line.
    func spawn(_ owner: String, prefix: [String] = []) throws -> (UnitProcess, String) {
        let unit = try UnitProcess(["--socket", server.path, "--owner", owner], prefix: prefix)
        return (unit, try unit.line())
    }

    /// The main stream's level over the last 100 ms of `milliseconds` rendered, in dB.
    func mainLevel(after milliseconds: Int) throws -> Double { try scene.mainLevel(after: milliseconds) }

    /// The level the main stream plays at `gain`: the constant 0.5 scaled.
    static func level(atGain gain: Float) -> Double { 20 * log10(0.5 * Double(gain)) }

    /// Holds owner names in the session's snapshot.
    func holders() -> Set<String> {
        let snapshot = session.snapshot
        return Set(snapshot.leases.map(\.owner) + snapshot.ducks.map(\.owner))
    }
}

#if canImport(Glibc)
    import Glibc
#endif
