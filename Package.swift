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
        .library(name: "ResilienceTesting", targets: ["ResilienceTesting"]),
        .library(name: "ResilienceKit", targets: ["ResilienceKit"]),
        .executable(name: "storm-simulator", targets: ["storm-simulator"]),
    ],
    targets: [
        // MARK: Vocabulary
        .target(name: "ResilienceCore", swiftSettings: strictSettings),

        // MARK: Feature modules (each imports ResilienceCore only)
        .target(name: "ResiliencePolicies", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),

        // MARK: Composition root
        .target(
            name: "ResilienceKit",
            dependencies: ["ResilienceCore", "ResiliencePolicies"],
            swiftSettings: strictSettings
        ),

        // MARK: Test kit
        .target(name: "ResilienceTesting", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),

        // MARK: Examples
        .target(
            name: "StormSimulation",
            dependencies: ["ResilienceCore", "ResiliencePolicies"],
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
            name: "StormSimulationTests",
            dependencies: ["StormSimulation", "ResilienceCore"],
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
            name: "ResilienceKitTests",
            dependencies: ["ResilienceKit", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),

        // MARK: Examples
        .executableTarget(
            name: "retry-playground",
            dependencies: ["ResilienceKit"],
            path: "Examples/RetryPlayground",
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
