// swift-tools-version: 6.1
// The watch-party example: a harness that plays whole scenes through SharedSession (a scene file, a live
// view, a plot drawn with Cairo). A package of its own so that apps depending on the library never
// resolve what only the example uses (swift-argument-parser, Cairo). `Scripts/run` builds and runs it;
// `Scripts/test` runs its tests.
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "WatchParty",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "watch-party", targets: ["WatchParty"]),
        // For the fuzzing package (Fuzz/), which feeds scene files to its parser.
        .library(name: "WatchPartyKit", targets: ["WatchPartyKit"]),
    ],
    dependencies: [
        .package(name: "SharedSession", path: "../.."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // Cairo (libcairo2-dev, installed by Scripts/install) draws the plot.
        .systemLibrary(
            name: "CCairo",
            path: "Sources/CCairo",
            pkgConfig: "cairo",
            providers: [.apt(["libcairo2-dev"])]
        ),
        // The example's logic (scenes, playback on both engines, live view, plot), which its tests use.
        .target(
            name: "WatchPartyKit",
            dependencies: [
                .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "SharedSessionRecording", package: "SharedSession"),
                .product(name: "SharedSessionPipeWire", package: "SharedSession"),
                .product(name: "SharedSessionPipeWireTesting", package: "SharedSession"),
                .product(name: "SharedSessionMedia", package: "SharedSession"),
                .product(name: "SharedSessionTesting", package: "SharedSession"),
                .product(name: "SharedSessionRemote", package: "SharedSession"),
                "CCairo",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/WatchPartyKit",
            swiftSettings: strict
        ),
        // The command: options, exit statuses, and the files it writes.
        .executableTarget(
            name: "WatchParty",
            dependencies: [
                "WatchPartyKit",
                .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/watch-party",
            swiftSettings: strict
        ),
        // The voice-chat SDK as a helper process (a scene's "voice-join" with "process": true): it joins
        // the host's session through SharedSessionRemote and calls OverlayAudioDelegate over the socket.
        .executableTarget(
            name: "watch-party-voice-helper",
            dependencies: [
                .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "SharedSessionRemote", package: "SharedSession"),
            ],
            path: "Sources/voice-helper",
            swiftSettings: strict
        ),
        .testTarget(
            name: "WatchPartyKitTests",
            dependencies: [
                "WatchPartyKit", "watch-party-voice-helper",
                .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/WatchPartyKitTests",
            swiftSettings: strict
        ),
    ]
)
