import CRealtimeProbe
import SharedSession
package import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The probe's switches: whether it interposes here, and the hook that shows it `Locked`.
package enum Probe {
    /// Installs the hook through which every `Locked` acquisition is counted (idempotent).
    package static let hookInstalled: Bool = {
        LockedProbe.setHook(CRealtimeProbe_noteLock)
        return true
    }()

    /// Whether the probe's wrappers are the ones the process calls (not under a sanitizer).
    package static var isInterposing: Bool { CRealtimeProbe_isInterposing() != 0 }

    /// Fails the test when the probe cannot count: reached only when the suite's condition let it run,
    /// which in CI it always does.
    package static func require() throws {
        _ = hookInstalled
        try #require(
            isInterposing,
            "the real-time probe does not interpose libc in this build (sanitized: \(CRealtimeProbe_isSanitized() != 0))"
        )
    }
}

/// Whether every test must run: in CI (`CI` set to any true value: `true`, `1`, `yes`, `on`, in any
/// case, as CI services set it) or when Scripts/test sets `SHAREDSESSION_REQUIRE_ALL`. Then a missing
/// daemon or a probe that cannot interpose fails the test instead of skipping it, and the model-based
/// test runs at least its default count.
package enum Requirements {
    package static let all: Bool = {
        func value(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        return isTrue(value("CI")) || isTrue(value("SHAREDSESSION_REQUIRE_ALL"))
    }()

    /// Whether an environment value says yes: `true`, `1`, `yes` or `on`, in any case, around blanks.
    package static func isTrue(_ value: String?) -> Bool {
        guard let value else { return false }
        return ["true", "1", "yes", "on"].contains(value.filter { $0 != " " && $0 != "\t" }.lowercased())
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the probe's tests where the probe can count; skipped with this reason elsewhere (a
    /// sanitizer build, whose runtime owns malloc), except in CI where they run and fail.
    package static var probeInterposes: Self {
        .enabled(
            "the real-time probe must interpose libc: not in a sanitizer build (in CI this runs and fails instead)"
        ) { Requirements.all || Probe.isInterposing }
    }
}
