// swift-tools-version: 6.1
// The fuzzing package: libFuzzer targets (built with -sanitize=fuzzer,address) for the inputs the
// library and its example read from outside: the watch-party scene file, the session recording, media
// files and the lines a remote unit sends its host. A package of its own, like Benchmarks/, so that no
// user of the library ever builds it; unsafeFlags are allowed here because nothing depends on this package. `Scripts/fuzz` builds and runs
// the targets on the corpora in Fuzz/Corpus.
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    // Coverage for libFuzzer and the address sanitizer; `Scripts/fuzz` builds the library the same way.
    .unsafeFlags(["-sanitize=fuzzer,address"]),
]
// lld: gold fails with an internal error on these objects.
let link: [LinkerSetting] = [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])]

let package = Package(
    name: "SharedSessionFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "SharedSession", path: ".."),
        .package(name: "WatchParty", path: "../Examples/WatchParty"),
    ],
    targets: [
        // Hands a target's input function to libFuzzer's driver (SwiftPM links `main` to each target's own).
        .target(name: "FuzzDriver", path: "Sources/FuzzDriver", swiftSettings: strict),
        // A scene file's text through `Scene.parse` (the JSON parser and the scene's checks).
        .executableTarget(
            name: "fuzz-scene",
            dependencies: ["FuzzDriver", .product(name: "WatchPartyKit", package: "WatchParty")],
            path: "Sources/FuzzScene",
            swiftSettings: strict,
            linkerSettings: link
        ),
        // A session recording's text through `SessionRecording(parsing:)`.
        .executableTarget(
            name: "fuzz-recording",
            dependencies: [
                "FuzzDriver", .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "SharedSessionRecording", package: "SharedSession"),
            ],
            path: "Sources/FuzzRecording",
            swiftSettings: strict,
            linkerSettings: link
        ),
        // A media file opened, played (frames rendered), sought once and played again by `MediaFileSource`.
        .executableTarget(
            name: "fuzz-media",
            dependencies: [
                "FuzzDriver",
                .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "SharedSessionMedia", package: "SharedSession"),
            ],
            path: "Sources/FuzzMedia",
            swiftSettings: strict,
            linkerSettings: link
        ),
        // A line a remote unit sends its host, through `RemoteProtocol.decodeUnitLine`.
        .executableTarget(
            name: "fuzz-remote",
            dependencies: [
                "FuzzDriver",
                .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "SharedSessionRemote", package: "SharedSession"),
            ],
            path: "Sources/FuzzRemote",
            swiftSettings: strict,
            linkerSettings: link
        ),
    ]
)
