// swift-tools-version: 6.0
// ResilienceMetrics: counters, timers and a breaker gauge for ResilienceKit through swift-metrics.
import PackageDescription

let package = Package(
    name: "ResilienceMetrics",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ResilienceMetrics", targets: ["ResilienceMetrics"])
    ],
    dependencies: [
        .package(name: "ResilienceKit", path: "../.."),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "ResilienceMetrics",
            dependencies: [
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "ResilienceMetricsTests",
            dependencies: [
                "ResilienceMetrics",
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResiliencePolicies", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
