// swift-tools-version: 6.0
// ResilienceServiceLifecycle: the sync engine, buffered telemetry and periodic exporters as swift-service-lifecycle
// services that drain or flush on graceful shutdown.
import PackageDescription

let package = Package(
    name: "ResilienceServiceLifecycle",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ResilienceServiceLifecycle", targets: ["ResilienceServiceLifecycle"])
    ],
    dependencies: [
        .package(name: "ResilienceKit", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "ResilienceServiceLifecycle",
            dependencies: [
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResilienceSync", package: "ResilienceKit"),
                .product(name: "ResilienceTelemetry", package: "ResilienceKit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "ResilienceServiceLifecycleTests",
            dependencies: [
                "ResilienceServiceLifecycle",
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResiliencePolicies", package: "ResilienceKit"),
                .product(name: "ResilienceSync", package: "ResilienceKit"),
                .product(name: "ResilienceTelemetry", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
