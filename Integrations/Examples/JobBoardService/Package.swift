// swift-tools-version: 6.0
// JobBoardService: the job board's composition root in a Hummingbird 2 server, with the AsyncHTTPClient
// transport against an embedded FaultServer: /jobs, /metrics (swift-prometheus), /health and a status page.
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
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
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
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "job-board-service",
            dependencies: [
                "JobBoardService",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "JobBoardServiceTests",
            dependencies: [
                "JobBoardService",
                .product(name: "ResilienceAsyncHTTPClient", package: "ResilienceAsyncHTTPClient"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
