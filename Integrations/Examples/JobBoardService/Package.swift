// swift-tools-version: 6.0
// JobBoardService: the job board's composition root in a Hummingbird 2 server, a template to copy: the
// AsyncHTTPClient transport under TracingTransport, Hummingbird's tracing/metrics/logging middleware,
// MetricsSystem on a swift-prometheus registry (/metrics), swift-argument-parser, a ServiceGroup with graceful
// shutdown, HummingbirdTesting; fake upstreams (a loopback FaultServer) only with `--demo`.
import PackageDescription

let package = Package(
    name: "JobBoardService",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "job-board-service", targets: ["job-board-service"])
    ],
    dependencies: [
        .package(name: "ResilienceKit", path: "../../.."),
        .package(name: "ResilienceAsyncHTTPClient", path: "../../AsyncHTTPClientTransport"),
        .package(name: "ResilienceLogging", path: "../../Logging"),
        .package(name: "ResilienceMetrics", path: "../../Metrics"),
        .package(name: "ResilienceTracing", path: "../../Tracing"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "JobBoardService",
            dependencies: [
                .product(name: "ResilienceKit", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "ResilienceAsyncHTTPClient", package: "ResilienceAsyncHTTPClient"),
                .product(name: "ResilienceLogging", package: "ResilienceLogging"),
                .product(name: "ResilienceMetrics", package: "ResilienceMetrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "job-board-service",
            dependencies: [
                "JobBoardService",
                .product(name: "ResilienceAsyncHTTPClient", package: "ResilienceAsyncHTTPClient"),
                .product(name: "ResilienceTracing", package: "ResilienceTracing"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "JobBoardServiceTests",
            dependencies: [
                "JobBoardService",
                .product(name: "ResilienceAsyncHTTPClient", package: "ResilienceAsyncHTTPClient"),
                .product(name: "ResilienceTracing", package: "ResilienceTracing"),
                .product(name: "ResilienceKit", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
