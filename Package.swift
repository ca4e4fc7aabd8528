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
        .library(name: "ResilienceSources", targets: ["ResilienceSources"]),
        .library(name: "ResilienceTesting", targets: ["ResilienceTesting"]),
        .library(name: "CSVJobBoardSource", targets: ["CSVJobBoardSource"]),
        .library(name: "ResilienceKit", targets: ["ResilienceKit"]),
    ],
    targets: [
        // MARK: Vocabulary
        .target(name: "ResilienceCore", swiftSettings: strictSettings),

        // MARK: Feature modules (each imports ResilienceCore only)
        .target(name: "ResiliencePolicies", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),
        .target(name: "ResilienceSources", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),

        // MARK: Composition root
        .target(
            name: "ResilienceKit",
            dependencies: ["ResilienceCore", "ResiliencePolicies"],
            swiftSettings: strictSettings
        ),

        // MARK: Test kit
        .target(name: "ResilienceTesting", dependencies: ["ResilienceCore"], swiftSettings: strictSettings),

        // MARK: Third-party extension example (imports ResilienceCore only)
        .target(
            name: "CSVJobBoardSource",
            dependencies: ["ResilienceCore"],
            path: "Examples/ThirdPartySource/Sources/CSVJobBoardSource",
            swiftSettings: strictSettings
        ),

        // MARK: Tests
        .testTarget(
            name: "ResilienceCoreTests",
            dependencies: ["ResilienceCore", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceSourcesTests",
            dependencies: ["ResilienceSources", "ResilienceTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CSVJobBoardSourceTests",
            dependencies: ["CSVJobBoardSource", "ResilienceSources", "ResilienceTesting"],
            path: "Examples/ThirdPartySource/Tests/CSVJobBoardSourceTests",
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
