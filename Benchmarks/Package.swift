// swift-tools-version: 6.1
// ResilienceKit's benchmarks: a separate package so the library itself stays dependency-free.
import PackageDescription

let package = Package(
    name: "ResilienceKitBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "ResilienceKit", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(name: "ResilienceMetrics", path: "../Integrations/Metrics"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ResilienceCore", package: "ResilienceKit"),
            ],
            path: "Benchmarks/BenchmarkSupport"
        ),
        .executableTarget(
            name: "PipelineOverhead",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ResilienceKit", package: "ResilienceKit"),
            ],
            path: "Benchmarks/PipelineOverhead",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "TelemetryCost",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ResilienceKit", package: "ResilienceKit"),
                .product(name: "ResilienceTelemetry", package: "ResilienceKit"),
            ],
            path: "Benchmarks/TelemetryCost",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "MetricsSinkCost",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResilienceMetrics", package: "ResilienceMetrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            path: "Benchmarks/MetricsSinkCost",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "AggregatorMemory",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ResilienceKit", package: "ResilienceKit"),
                .product(name: "ResilienceSources", package: "ResilienceKit"),
            ],
            path: "Benchmarks/AggregatorMemory",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "LimiterQueue",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ResilienceKit", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
            ],
            path: "Benchmarks/LimiterQueue",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "FeedParsing",
            dependencies: [.product(name: "ResilienceSources", package: "ResilienceKit")],
            path: "Benchmarks/FeedParsing"
        ),
        .executableTarget(
            name: "StructuredFieldParsing",
            dependencies: [.product(name: "ResilienceCore", package: "ResilienceKit")],
            path: "Benchmarks/StructuredFieldParsing"
        ),
        .executableTarget(
            name: "simulation-throughput",
            dependencies: [
                .product(name: "ResilienceKit", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
            ],
            path: "Benchmarks/SimulationThroughput"
        ),
        .executableTarget(
            name: "HTTPCacheHit",
            dependencies: [.product(name: "ResilienceTransport", package: "ResilienceKit")],
            path: "Benchmarks/HTTPCacheHit"
        ),
        .systemLibrary(name: "BenchSQLite", path: "Benchmarks/BenchSQLite", pkgConfig: "sqlite3"),
        .executableTarget(
            name: "DurableQueue",
            dependencies: [
                "BenchSQLite",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ResilienceKit", package: "ResilienceKit"),
                .product(name: "ResilienceSync", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "ResilienceTransport", package: "ResilienceKit"),
            ],
            path: "Benchmarks/DurableQueue",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
