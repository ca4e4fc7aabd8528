// swift-tools-version: 6.0
// ResilienceLogging: a TelemetrySink that logs ResilienceKit's events through swift-log.
import PackageDescription

let package = Package(
    name: "ResilienceLogging",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ResilienceLogging", targets: ["ResilienceLogging"])
    ],
    dependencies: [
        .package(name: "ResilienceKit", path: "../.."),
        // Floor: the tests' InMemoryLogging product first shipped in swift-log 1.8.0 (README, "Dependency floors").
        .package(url: "https://github.com/apple/swift-log", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "ResilienceLogging",
            dependencies: [
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResilienceTelemetry", package: "ResilienceKit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "ResilienceLoggingTests",
            dependencies: [
                "ResilienceLogging",
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
