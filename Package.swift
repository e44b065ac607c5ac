// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "SharedSession",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SharedSession", targets: ["SharedSession"]),
        .library(name: "SharedSessionRecording", targets: ["SharedSessionRecording"]),
        .library(name: "SharedSessionTesting", targets: ["SharedSessionTesting"]),
        .library(name: "SharedSessionPipeWire", targets: ["SharedSessionPipeWire"]),
        .library(name: "SharedSessionPipeWireTesting", targets: ["SharedSessionPipeWireTesting"]),
        .library(name: "SharedSessionMedia", targets: ["SharedSessionMedia"]),
        .library(name: "SharedSessionRemote", targets: ["SharedSessionRemote"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        // Only SharedSessionRemote uses it: the core and the other products never resolve NIO into an app.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // The remote product's line framing (LineBasedFrameDecoder); likewise only SharedSessionRemote.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    ],
    targets: [
        .target(
            name: "SharedSession",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The JSON forms of the core's values, given once: what a recording writes and what the remote
        // protocol sends. Not a product: SharedSessionRecording re-exports it (its Codable conformances
        // and RecordingTimeOrigin are that product's API), SharedSessionRemote uses it inside.
        .target(
            name: "SharedSessionCoding",
            dependencies: ["SharedSession"],
            swiftSettings: strict
        ),
        // Recording a session to a file and replaying it: Foundation (JSON, files) stays out of the core.
        .target(
            name: "SharedSessionRecording",
            dependencies: ["SharedSession", "SharedSessionCoding", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .target(
            name: "SharedSessionTesting",
            dependencies: ["SharedSession"],
            swiftSettings: strict
        ),
        .systemLibrary(
            name: "CPipeWire",
            pkgConfig: "libpipewire-0.3",
            providers: [.apt(["libpipewire-0.3-dev"])]
        ),
        // The thin layer of wrappers over libpipewire that Swift cannot call directly.
        .target(
            name: "CPipeWireShim",
            dependencies: ["CPipeWire"]
        ),
        // A program of its own: the process that gives adopted nodes back when the engine's process dies.
        // It is the engine's executable run again (a constructor takes over before main), so it is linked
        // into every program that depends on SharedSessionPipeWire.
        .target(
            name: "CAdoptionWatchdog",
            dependencies: ["CPipeWire"]
        ),
        // The engines' decisions as plain values, with no C library beneath them: adopting other players'
        // nodes (rules, the book, the machine), the graph's other audio, the quantum, reconnecting, a
        // stream's health. Its tests run offline; the PipeWire engine drives it (and re-exports the
        // adoption's public types), and so can another engine.
        .target(
            name: "SharedSessionEnginePolicy",
            dependencies: ["SharedSession"],
            swiftSettings: strict
        ),
        .target(
            name: "SharedSessionPipeWire",
            dependencies: [
                "SharedSession",
                "SharedSessionEnginePolicy",
                "CPipeWireShim",
                "CAdoptionWatchdog",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // A PipeWire sink that delays by a set time and declares it (a stand-in for Bluetooth headphones).
        .target(
            name: "CLatencySink",
            dependencies: ["CPipeWire"]
        ),
        // Devices for testing a host on a real daemon, beside the engine as SharedSessionTesting is beside
        // the core: an app never links them unless its tests ask for them.
        .target(
            name: "SharedSessionPipeWireTesting",
            dependencies: ["SharedSession", "CLatencySink"],
            swiftSettings: strict
        ),
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswresample-dev", "libavutil-dev"])]
        ),
        .target(
            name: "CFFmpegShim",
            dependencies: ["CFFmpeg"]
        ),
        .target(
            name: "SharedSessionMedia",
            dependencies: ["SharedSession", "CFFmpegShim"],
            swiftSettings: strict
        ),
        // The example a developer copies (Examples/MinimalHost: a host app and one SDK sharing the
        // session). It uses only the library's products. The watch-party harness is a package of its own
        // (Examples/WatchParty), so apps depending on this one never resolve its dependencies.
        .executableTarget(
            name: "minimal-host",
            dependencies: ["SharedSession", "SharedSessionPipeWire"],
            path: "Examples/MinimalHost",
            swiftSettings: strict
        ),
        .target(
            name: "CRealtimeProbe",
            path: "Tests/CRealtimeProbe"
        ),
        // What the test targets share: the offline scene, the probe's switches, whether every test
        // must run (CI), seeded noise, the remote-unit process driver. Not a product: users never see it.
        .target(
            name: "SharedSessionTestSupport",
            dependencies: ["SharedSession", "SharedSessionTesting", "CRealtimeProbe"],
            path: "Tests/SharedSessionTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "SharedSessionTests",
            dependencies: [
                "SharedSession",
                "SharedSessionTesting",
                "SharedSessionTestSupport",
                "CRealtimeProbe",
                // The model-based test gives its thousands of sessions a logger that discards.
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SharedSessionRecordingTests",
            dependencies: [
                "SharedSession", "SharedSessionRecording", "SharedSessionTesting", "SharedSessionTestSupport",
            ],
            // Read from the source tree (#filePath), so the golden file can be written again in place.
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SharedSessionEnginePolicyTests",
            dependencies: ["SharedSession", "SharedSessionEnginePolicy"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SharedSessionTestingTests",
            dependencies: ["SharedSession", "SharedSessionTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SharedSessionPipeWireTests",
            dependencies: [
                "SharedSession", "SharedSessionPipeWire", "SharedSessionPipeWireTesting", "SharedSessionMedia",
                "SharedSessionTesting", "SharedSessionTestSupport", "CRealtimeProbe", "SharedSessionRemote",
                "remote-unit", "adopting-host", "click-recorder",
            ],
            swiftSettings: strict
        ),
        // A session served to units in other processes over a Unix socket: NIO stays out of the core.
        .target(
            name: "SharedSessionRemote",
            dependencies: [
                "SharedSession", "SharedSessionCoding",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
            ],
            swiftSettings: strict
        ),
        // The C API (libsharedsession.so): `@c` functions over the session, PipeWire, media files and
        // the socket server, for hosts in any language. Scripts/build-clib builds it as a C library.
        .target(
            name: "SharedSessionC",
            dependencies: [
                "SharedSession", "SharedSessionCoding", "SharedSessionPipeWire", "SharedSessionMedia",
                "SharedSessionRemote",
            ],
            exclude: ["Export"],
            swiftSettings: strict
        ),
        // The unit the remote tests spawn as a real process: it connects, follows a script of calls
        // read from its arguments and stdin, and reports what it saw on stdout.
        .executableTarget(
            name: "remote-unit",
            dependencies: ["SharedSession", "SharedSessionRemote"],
            path: "Tests/RemoteUnit",
            swiftSettings: strict
        ),
        // The host the host-ending tests run as a real process: it adopts a player's node, ducks it and
        // ends as told (exit, crash; the test's SIGKILL).
        .executableTarget(
            name: "adopting-host",
            dependencies: ["SharedSession", "SharedSessionPipeWire"],
            path: "Tests/AdoptingHost",
            swiftSettings: strict
        ),
        // The host the echo-cancellation churn tests spawn as a real process (a crash of the canceller's
        // teardown is then a failed test with its signal), and its interposer that widens that race. Not a
        // dependency of the test target: a dependency's objects are linked into the test binary, where
        // CRealtimeProbe defines the same interposed function. `swift build --build-tests` builds it.
        .target(
            name: "CEchoRaceWidener",
            dependencies: ["CPipeWire"],
            path: "Tests/CEchoRaceWidener"
        ),
        .executableTarget(
            name: "echo-churn",
            dependencies: ["SharedSession", "SharedSessionPipeWire", "SharedSessionRemote", "CEchoRaceWidener"],
            path: "Tests/EchoChurn",
            swiftSettings: strict
        ),
        // The clock tests' outside reference: a C program on its own PipeWire client that records a sink's
        // monitor and prints when each click was played, by its stream's timing and its own clock.
        .executableTarget(
            name: "click-recorder",
            dependencies: ["CPipeWire"],
            path: "Tests/ClickRecorder",
            linkerSettings: [.linkedLibrary("m")]
        ),
        .testTarget(
            name: "SharedSessionRemoteTests",
            dependencies: [
                "SharedSession", "SharedSessionRemote", "SharedSessionRecording", "SharedSessionTesting",
                "SharedSessionTestSupport", "remote-unit",
                // Its calls on an event loop of NIO's own.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // Read from the source tree (#filePath), as the recording's golden file is.
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SharedSessionMediaTests",
            dependencies: [
                "SharedSession", "SharedSessionMedia", "SharedSessionTesting", "SharedSessionTestSupport",
                "CRealtimeProbe",
            ],
            swiftSettings: strict
        ),
    ]
)

// Scripts/mutate builds only what the offline suites need, in its own scratch path: with
// SHAREDSESSION_OFFLINE_ONLY=1 the PipeWire product, its C targets, its tests and the example that
// uses it are left out, so a mutated core rebuilds in a fraction of the time. With
// SHAREDSESSION_OFFLINE_ONLY=core (Scripts/test's release gates and sanitizer pass, which run no
// remote-unit suite) the remote-unit product and its tests are left out too, and with them swift-nio,
// which would otherwise be compiled again in each of their scratch paths. Its packages stay declared, so
// that every scratch path resolves the same Package.resolved; SwiftPM then warns that no target uses
// them, which in this mode is what is meant.
let offlineOnly = Context.environment["SHAREDSESSION_OFFLINE_ONLY"]
if offlineOnly == "1" || offlineOnly == "core" {
    var left: Set<String> = [
        "SharedSessionPipeWire", "CPipeWire", "CPipeWireShim", "CAdoptionWatchdog", "CLatencySink",
        "SharedSessionPipeWireTesting", "SharedSessionPipeWireTests", "minimal-host", "adopting-host",
        "CEchoRaceWidener", "echo-churn", "click-recorder", "SharedSessionC",
    ]
    if offlineOnly == "core" { left.formUnion(["SharedSessionRemote", "remote-unit", "SharedSessionRemoteTests"]) }
    package.targets.removeAll { left.contains($0.name) }
    package.products.removeAll { left.contains($0.name) }
}

// The C library: Scripts/build-clib sets SHAREDSESSION_CLIB to the folder it builds into. Then the
// C API's target also writes its generated header there, and a shared library product links it with
// the Swift runtime inside (no Swift needed at run time), a SONAME, and only the C API's symbols
// exported (Export/sharedsession.map). Unsafe flags, so only then: apps depending on this package
// never see them.
if let folder = Context.environment["SHAREDSESSION_CLIB"], !folder.isEmpty,
    let target = package.targets.first(where: { $0.name == "SharedSessionC" })
{
    let exports = "\(Context.packageDirectory)/Sources/SharedSessionC/Export/sharedsession.map"
    target.swiftSettings = strict + [.unsafeFlags(["-emit-clang-header-path", "\(folder)/sharedsession.h"])]
    // lld: it honours the version script for every symbol (gold left thousands of local Swift symbols in
    // the dynamic table) and finds archive members in any order. The Foundation archives are named:
    // with -static-stdlib the driver links only the standard library's, and `-z defs` makes any symbol
    // left undefined a link error here rather than in the host's link.
    let foundation = [
        "Foundation", "CoreFoundation", "FoundationEssentials", "FoundationInternationalization", "_FoundationCShims",
        "_FoundationCollections", "_FoundationICU",
    ]
    target.linkerSettings = [
        .unsafeFlags(
            ["-static-stdlib", "-use-ld=lld"] + foundation.map { "-l\($0)" } + [
                "-Xlinker", "-z", "-Xlinker", "defs", "-Xlinker", "-soname=libsharedsession.so.0",
                "-Xlinker", "--version-script=\(exports)",
            ])
    ]
    package.products.append(.library(name: "sharedsession", type: .dynamic, targets: ["SharedSessionC"]))
}
