// swift-tools-version: 6.0
// ResilienceKit: resilient network data sources for Swift. No package dependencies (see ARCHITECTURE).
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "ResilienceKit",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ResilienceCore", targets: ["ResilienceCore"]),
        .library(name: "ResiliencePolicies", targets: ["ResiliencePolicies"]),
        .library(name: "ResilienceTransport", targets: ["ResilienceTransport"]),
        .library(name: "ResilienceTesting", targets: ["ResilienceTesting"]),
        .library(name: "ResilienceKit", targets: ["ResilienceKit"]),
        .library(name: "ResilienceSync", targets: ["ResilienceSync"]),
        .executable(name: "fault-server", targets: ["fault-server"]),
        .executable(name: "sync-demo", targets: ["sync-demo"]),
    ],
    targets: [
        // MARK: Vocabulary
        .target(name: "ResilienceCore", swiftSettings: strictSettings),

        // MARK: Feature modules (each imports ResilienceCore only)
        .target(name: "ResiliencePolicies", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),
        .target(name: "ResilienceTransport", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),

        // MARK: Sync (+ the system SQLite; `import SQLite3` on Apple platforms)
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "ResilienceSync",
            dependencies: [
                "ResilienceCore",
                .target(name: "CSQLite", condition: .when(platforms: [.linux, .android, .windows, .openbsd])),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: Composition root
        .target(
            name: "ResilienceKit",
            dependencies: ["ResilienceCore", "ResiliencePolicies"],
            swiftSettings: strictSettings
        ),

        // MARK: Test kit
        .target(name: "ResilienceTesting", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),

        // MARK: Examples
        .executableTarget(
            name: "fault-server", dependencies: ["ResilienceTesting"], path: "Examples/FaultServerCLI",
            swiftSettings: strictSettings
        ),
        .target(
            name: "SyncExampleSupport", dependencies: ["ResilienceCore", "ResilienceSync"],
            path: "Examples/SyncExampleSupport", swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "sync-crash-child", dependencies: ["ResilienceSync", "ResilienceTransport", "SyncExampleSupport"],
            path: "Examples/SyncCrashChild", swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "sync-demo",
            dependencies: [
                "ResilienceSync", "ResiliencePolicies", "ResilienceTransport", "ResilienceTesting",
                "SyncExampleSupport",
            ],
            path: "Examples/SyncDemo", swiftSettings: strictSettings
        ),

        // MARK: Tests
        .testTarget(
            name: "ResilienceCoreTests",
            dependencies: ["ResilienceCore", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceSyncTests",
            dependencies: [
                "ResilienceSync", "ResilienceTesting", "ResiliencePolicies", "sync-crash-child",
                .target(name: "CSQLite", condition: .when(platforms: [.linux, .android, .windows, .openbsd])),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceTransportTests",
            dependencies: ["ResilienceTransport", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceBreakerTests",
            dependencies: ["ResiliencePolicies", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
