// swift-tools-version: 6.0
// ResilienceKit: resilient network data sources for Swift. No package dependencies (see ARCHITECTURE).
import PackageDescription

let strictSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

/// SQLite comes from the system: `libsqlite3-dev` through pkg-config off Apple platforms, the SDK's `SQLite3`
/// module on Apple platforms.
let systemSQLite: Target.Dependency = .target(
    name: "CSQLite", condition: .when(platforms: [.linux, .android, .windows, .openbsd]))

let package = Package(
    name: "ResilienceKit",
    defaultLocalization: "en",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ResilienceCore", targets: ["ResilienceCore"]),
        .library(name: "ResiliencePolicies", targets: ["ResiliencePolicies"]),
        .library(name: "ResilienceTransport", targets: ["ResilienceTransport"]),
        .library(name: "ResilienceSources", targets: ["ResilienceSources"]),
        .library(name: "ResilienceTelemetry", targets: ["ResilienceTelemetry"]),
        .library(name: "ResiliencePresentation", targets: ["ResiliencePresentation"]),
        .library(name: "ResilienceSync", targets: ["ResilienceSync"]),
        .library(name: "ResilienceTesting", targets: ["ResilienceTesting"]),
        .library(name: "ResilienceKit", targets: ["ResilienceKit"]),
        .library(name: "CSVJobBoardSource", targets: ["CSVJobBoardSource"]),
        .executable(name: "retry-playground", targets: ["retry-playground"]),
        .executable(name: "fault-server", targets: ["fault-server"]),
        .executable(name: "sync-demo", targets: ["sync-demo"]),
        .executable(name: "storm-simulator", targets: ["storm-simulator"]),
        .executable(name: "job-board", targets: ["job-board"]),
        .executable(name: "connectivity-probe", targets: ["connectivity-probe"]),
    ],
    targets: [
        // MARK: Vocabulary
        .target(name: "ResilienceCore", swiftSettings: strictSettings),

        // MARK: Feature modules (each imports ResilienceCore only)
        .target(name: "ResiliencePolicies", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),
        .target(name: "ResilienceSources", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),
        .target(name: "ResilienceTelemetry", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),
        .target(
            name: "ResiliencePresentation",
            dependencies: ["ResilienceCore"],
            resources: [.process("Resources")],
            swiftSettings: strictSettings
        ),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "ResilienceSync", dependencies: ["ResilienceCore", systemSQLite], swiftSettings: strictSettings),
        // The HTTP cache's durable store uses the same system SQLite.
        .target(
            name: "ResilienceTransport", dependencies: ["ResilienceCore", systemSQLite], swiftSettings: strictSettings),

        // MARK: Composition root
        .target(
            name: "ResilienceKit",
            dependencies: [
                "ResilienceCore", "ResiliencePolicies", "ResilienceTransport", "ResilienceSources",
                "ResilienceTelemetry", "ResiliencePresentation",
            ],
            swiftSettings: strictSettings
        ),

        // MARK: Test kit
        .target(name: "ResilienceTesting", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),

        // MARK: Examples
        // A third-party source module: imports ResilienceCore only, registered from outside.
        .target(
            name: "CSVJobBoardSource",
            dependencies: ["ResilienceCore"],
            path: "Examples/ThirdPartySource/Sources/CSVJobBoardSource",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "retry-playground",
            dependencies: ["ResilienceKit"],
            path: "Examples/RetryPlayground",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "job-board", dependencies: ["ResilienceKit", "ResilienceTesting"], path: "Examples/JobBoard",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "fault-server", dependencies: ["ResilienceTesting"], path: "Examples/FaultServerCLI",
            swiftSettings: strictSettings
        ),
        .target(
            name: "SyncExampleSupport", dependencies: ["ResilienceCore", "ResilienceSync"],
            path: "Examples/SyncExampleSupport", swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "sync-crash-child",
            dependencies: ["ResilienceSync", "ResiliencePolicies", "ResilienceTransport", "SyncExampleSupport"],
            path: "Examples/SyncCrashChild", swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "transport-memory-probe", dependencies: ["ResilienceTransport", "ResilienceTesting"],
            path: "Examples/TransportMemoryProbe", swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "presentation-probe", dependencies: ["ResilienceCore", "ResiliencePresentation"],
            path: "Examples/PresentationProbe", swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "connectivity-probe", dependencies: ["ResilienceCore", "ResilienceTransport"],
            path: "Examples/ConnectivityProbe", swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "sync-demo",
            dependencies: [
                "ResilienceSync", "ResiliencePolicies", "ResilienceTransport", "ResilienceTesting",
                "ResiliencePresentation", "SyncExampleSupport",
            ],
            path: "Examples/SyncDemo", swiftSettings: strictSettings
        ),

        .target(
            name: "StormSimulation",
            dependencies: ["ResilienceKit", "ResilienceTesting"],
            path: "Examples/StormSimulator/StormSimulation",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "storm-simulator",
            dependencies: ["StormSimulation"],
            path: "Examples/StormSimulator/CLI",
            swiftSettings: strictSettings
        ),

        // MARK: Tests
        .testTarget(
            name: "ResilienceCoreTests",
            dependencies: ["ResilienceCore", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResiliencePoliciesTests",
            dependencies: ["ResiliencePolicies", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceBreakerTests",
            dependencies: ["ResiliencePolicies", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceLimiterTests",
            dependencies: ["ResiliencePolicies", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceTransportTests",
            dependencies: [
                "ResilienceTransport", "ResilienceTesting", "transport-memory-probe", "connectivity-probe",
                systemSQLite,
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceSourcesTests",
            dependencies: ["ResilienceSources", "ResilienceTesting", "ResilienceTransport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CSVJobBoardSourceTests",
            dependencies: ["CSVJobBoardSource", "ResilienceSources", "ResilienceTesting"],
            path: "Examples/ThirdPartySource/Tests/CSVJobBoardSourceTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceTelemetryTests",
            dependencies: ["ResilienceCore", "ResilienceTelemetry", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResiliencePresentationTests",
            dependencies: ["ResilienceCore", "ResiliencePresentation", "ResilienceTesting", "presentation-probe"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceSyncTests",
            dependencies: [
                "ResilienceSync", "ResilienceTesting", "ResiliencePolicies", "ResilienceTransport", "sync-crash-child",
                systemSQLite,
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceKitTests",
            dependencies: ["ResilienceKit", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceSimulationTests",
            dependencies: ["ResilienceKit", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "StormSimulationTests",
            dependencies: ["StormSimulation", "ResilienceKit", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
