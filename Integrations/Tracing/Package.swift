// swift-tools-version: 6.0
// ResilienceTracing: one swift-distributed-tracing span per resilient operation, with its retries, rejections
// and fallbacks as span events.
import PackageDescription

let package = Package(
    name: "ResilienceTracing",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ResilienceTracing", targets: ["ResilienceTracing"])
    ],
    dependencies: [
        .package(name: "ResilienceKit", path: "../.."),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "ResilienceTracing",
            dependencies: [
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResilienceTelemetry", package: "ResilienceKit"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "ResilienceTracingTests",
            dependencies: [
                "ResilienceTracing",
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResiliencePolicies", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
