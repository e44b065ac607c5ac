// swift-tools-version: 6.1
// The benchmark package: built on its own (`swift build --package-path Benchmarks`), never by users
// of the library. `Benchmarks/run` runs everything and writes BENCHMARKS.md.
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "SharedSessionBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "SharedSession", path: ".."),
        // RuntimeInterposer (a default trait) needs a package this machine has no copy of.
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Coordination",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SharedSession", package: "SharedSession"),
                "CHeap",
            ],
            path: "Benchmarks/Coordination",
            swiftSettings: strict,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .target(name: "CHeap", path: "Sources/CHeap"),
        .executableTarget(
            name: "engine-load",
            dependencies: [
                .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "SharedSessionPipeWire", package: "SharedSession"),
                .product(name: "SharedSessionRemote", package: "SharedSession"),
                "CHeap",
            ],
            path: "Sources/EngineLoad",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "media-load",
            dependencies: [
                .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "SharedSessionMedia", package: "SharedSession"),
            ],
            path: "Sources/MediaLoad",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "voice-timing",
            dependencies: [.product(name: "SharedSession", package: "SharedSession")],
            path: "Sources/VoiceTiming",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "echo-room",
            dependencies: [
                .product(name: "SharedSession", package: "SharedSession"),
                .product(name: "SharedSessionPipeWire", package: "SharedSession"),
                .product(name: "SharedSessionTesting", package: "SharedSession"),
            ],
            path: "Sources/EchoRoom",
            swiftSettings: strict
        ),
    ]
)
