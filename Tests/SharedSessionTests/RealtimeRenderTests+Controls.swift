import CRealtimeProbe
import SharedSession
import SharedSessionTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One function the probe wraps, with its positive control in Tests/CRealtimeProbe/CRealtimeProbeControls.c.
struct WrappedFunction: Sendable, CustomTestStringConvertible {
    let index: Int32
    let name: String
    /// 0 allocations, 1 frees, 2 locks, 3 system calls.
    let counter: Int32

    var testDescription: String { name }

    static let all: [WrappedFunction] = (0..<CRealtimeProbe_controlCount()).map {
        WrappedFunction(
            index: $0, name: String(cString: CRealtimeProbe_controlName($0)), counter: CRealtimeProbe_controlCounter($0)
        )
    }

    /// The counts of every counter but this function's.
    func others(_ counts: CRealtimeProbe_Counts) -> [Int64] {
        let all = [counts.allocations, counts.frees, counts.locks, counts.syscalls]
        return all.enumerated().filter { $0.offset != Int(counter) }.map(\.element)
    }

    func own(_ counts: CRealtimeProbe_Counts) -> Int64 {
        [counts.allocations, counts.frees, counts.locks, counts.syscalls][Int(counter)]
    }

    /// The last call the probe counted of this function's kind.
    func lastCall(_ calls: LastCalls) -> String {
        [calls.allocations, calls.frees, calls.locks, calls.syscalls][Int(counter)]
    }
}

/// Positive controls for every wrapper: each call the probe claims to see, made once on an armed
/// thread, is counted once, in its counter, under its name. And the list of controls is the list of
/// wrappers, read from the probe's source, so a wrapper added without a control fails here.
extension RealtimeRenderTests {
    /// The repository's root, from this file's place in it.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    @Test(
        "the probe counts each wrapped function once, in its counter, by name (positive control)",
        arguments: WrappedFunction.all)
    func probeCatchesEachWrappedFunction(function: WrappedFunction) throws {
        try Probe.require()
        try #require(CRealtimeProbe_runControl(function.index) == 0, "the control of \(function.name) could not run")
        let counts = CRealtimeProbe_read()
        let culprit = String(cString: CRealtimeProbe_lastCall())
        print(
            "[probe] \(function.name): \(counts.allocations) allocations, \(counts.frees) frees, \(counts.locks) locks, "
                + "\(counts.syscalls) system calls; last \(culprit)")
        if function.name == "pthread_cond_wait" {
            // Woken by another thread's signal; a spurious wake-up waits once more.
            #expect(function.own(counts) >= 1, "last counted: \(culprit)")
        } else {
            #expect(function.own(counts) == 1, "last counted: \(culprit)")
        }
        #expect(function.lastCall(LastCalls()) == function.name)
        if function.name.hasSuffix("dprintf") || function.name.hasSuffix("dprintf_chk") {
            // glibc's vdprintf writes through a FILE of its own whose buffer comes from malloc and goes
            // back with free (measured: one of each), seen as they are.
            #expect(counts.allocations == 1 && counts.frees == 1 && counts.locks == 0)
        } else {
            #expect(function.others(counts).allSatisfy { $0 == 0 }, "last counted: \(culprit)")
            #expect(culprit == function.name)
        }
    }

    @Test("every function the probe wraps has a positive control")
    func everyWrapperHasAControl() throws {
        let source = try ["CRealtimeProbe.c", "CRealtimeProbeStdio.c"].map {
            try String(
                contentsOf: Self.repositoryRoot.appendingPathComponent("Tests/CRealtimeProbe/\($0)"), encoding: .utf8)
        }.joined(separator: "\n")
        var wrapped = Set<String>()
        for line in source.split(separator: "\n") {
            // FORWARD(counter, type, name, ...) and FORWARD_VERSIONED(...): the macro-made wrappers.
            if line.hasPrefix("FORWARD(") || line.hasPrefix("FORWARD_VERSIONED(") {
                let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                wrapped.insert(fields[2])
            }
            // COUNT(counter, "name") in a wrapper written out by hand.
            if let range = line.range(of: #"COUNT\(\w+, "([A-Za-z_0-9]+)"\)"#, options: .regularExpression) {
                let call = line[range]
                let name = call.split(separator: "\"")[1]
                wrapped.insert(String(name))
            }
        }
        let controlled = Set(WrappedFunction.all.map(\.name))
        #expect(wrapped.count >= 80, "the probe's source was not read as expected: \(wrapped.sorted())")
        #expect(wrapped.subtracting(controlled).isEmpty, "wrapped without a control")
        #expect(controlled.subtracting(wrapped).isEmpty, "a control for a function the probe does not wrap")
    }

    @Test("the probe catches Swift's print, a buffered write through stdout (positive control)")
    func probeCatchesPrint() throws {
        try Probe.require()
        print("[probe] warm-up: stdout's buffer exists before the counted print")
        CRealtimeProbe_reset()
        CRealtimeProbe_armCurrentThread()
        print("[probe] a positive control: this line was printed on an armed thread")
        CRealtimeProbe_disarmCurrentThread()
        let counts = CRealtimeProbe_read()
        let calls = LastCalls()
        #expect(counts.locks >= 1, "print takes stdout's lock")
        #expect(calls.locks == "flockfile")
        #expect(counts.syscalls >= 1, "print writes through fwrite")
        #expect(calls.syscalls == "fwrite")
    }

    @Test("every lock of the package is a Locked, whose every acquisition the probe counts")
    func everyLockIsLocked() throws {
        // An uncontended Synchronization.Mutex makes no call any wrapper could see (one inlined
        // compare-exchange); `Locked` reports each acquisition to the probe's hook. So the package may
        // use Mutex only inside Locked. The same holds for the locks of Dispatch and Foundation
        // (`DispatchQueue.sync`, semaphores, NSLock): libdispatch waits on futexes of its own, which the
        // probe's libc interposer cannot see either. pthread mutexes are libc calls the probe counts.
        let sources = Self.repositoryRoot.appendingPathComponent("Sources")
        let enumerator = try #require(FileManager.default.enumerator(atPath: sources.path))
        var direct: [String] = []
        var files = 0
        while let path = enumerator.nextObject() as? String {
            guard path.hasSuffix(".swift"), !path.hasSuffix("/Locked.swift") else { continue }
            files += 1
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                let unseen = [
                    #"\bMutex\s*[<(]"#, #"\.sync\s*(\{|\(execute)"#, #"\bDispatchSemaphore\b"#,
                    #"\bNS(Recursive)?Lock\b"#, #"\bNSCondition\b"#, #"\bos_unfair_lock"#,
                ]
                let allowed = Self.unseenLocksAllowed.contains { path.hasSuffix($0.file) && code.contains($0.code) }
                if !allowed, unseen.contains(where: { code.range(of: $0, options: .regularExpression) != nil }) {
                    direct.append("\(path):\(number + 1): \(code)")
                }
            }
        }
        #expect(files > 50, "the package's sources were not found at \(sources.path)")
        #expect(
            direct.isEmpty,
            "a lock the probe cannot see (Mutex, DispatchQueue.sync, a semaphore, NSLock); use Locked:\n\(direct.joined(separator: "\n"))"
        )
    }

    /// The locks the probe cannot see that the package may take, each with why it is never on the
    /// render path.
    static let unseenLocksAllowed: [(file: String, code: String, why: String)] = [
        (
            "SharedSessionPipeWire/EngineEventQueue.swift", "queue.sync {}",
            "drain(): a test waiting until the engine's events were delivered; never called by the engine"
        ),
        (
            "SharedSessionRecording/SessionRecorder.swift", "queue.sync { write() }",
            "flush() and stop(): the host waits for the recording's file writes; never under the session's locks"
        ),
        (
            "SharedSessionC/EventPump.swift", "DispatchSemaphore(value: 0)",
            "the C API's event thread sleeps on it until the session's delegate queues an event; events are "
                + "delivered off the render path, and the signal never waits"
        ),
    ]
}
