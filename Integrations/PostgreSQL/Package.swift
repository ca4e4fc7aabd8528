// swift-tools-version: 6.0
// ResilienceKit's PostgreSQL coordination store: shared rate limits and breaker state across replicas.
import PackageDescription

let strictSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "ResiliencePostgreSQL",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "ResiliencePostgreSQL", targets: ["ResiliencePostgreSQL"])
    ],
    dependencies: [
        .package(name: "ResilienceKit", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
    ],
    targets: [
        .target(
            name: "ResiliencePostgreSQL",
            dependencies: [
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "shared-limit-demo",
            dependencies: [
                "ResiliencePostgreSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ResiliencePolicies", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "ResilienceTransport", package: "ResilienceKit"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "shared-state-overhead",
            dependencies: [
                "ResiliencePostgreSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ResiliencePolicies", package: "ResilienceKit"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResiliencePostgreSQLTests",
            dependencies: [
                "ResiliencePostgreSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ResiliencePolicies", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
