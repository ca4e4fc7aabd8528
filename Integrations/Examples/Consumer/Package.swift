// swift-tools-version: 6.0
// A package that adds ResilienceKit and every integration the way a user does: by URL and version, from the
// repositories `Scripts/publish-packages.sh` makes. It is not part of this repository's package graph (nothing
// here depends on it by path); CI publishes into a temporary directory and builds and tests it:
//
//   Scripts/publish-packages.sh /tmp/published 1.0.0
//   RESILIENCEKIT_PACKAGES=file:///tmp/published RESILIENCEKIT_VERSION=1.0.0 \
//       swift test --package-path Integrations/Examples/Consumer
import Foundation
import PackageDescription

/// Where the published repositories are (`BASE_URL` of the publish script) and which version to take.
let environment = ProcessInfo.processInfo.environment
let packagesURL = environment["RESILIENCEKIT_PACKAGES"] ?? "https://github.com/resiliencekit"
let version = Version(stringLiteral: environment["RESILIENCEKIT_VERSION"] ?? "1.0.0")

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v13)],
    dependencies: [
        // The lines a user adds (with the published URLs and the version they want):
        .package(url: "\(packagesURL)/ResilienceKit", from: version),
        .package(url: "\(packagesURL)/ResilienceAsyncHTTPClient", from: version),
        .package(url: "\(packagesURL)/ResilienceLogging", from: version),
        .package(url: "\(packagesURL)/ResilienceMetrics", from: version),
        .package(url: "\(packagesURL)/ResilienceTracing", from: version),
        .package(url: "\(packagesURL)/ResilienceServiceLifecycle", from: version),
        .package(url: "\(packagesURL)/ResilienceOpenAPI", from: version),
        .package(url: "\(packagesURL)/ResiliencePostgreSQL", from: version),
        // The ecosystem types the calls below name.
        .package(url: "https://github.com/apple/swift-log", from: "1.5.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
    ],
    targets: [
        .testTarget(
            name: "ConsumerTests",
            dependencies: [
                .product(name: "ResilienceKit", package: "ResilienceKit"),
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "ResilienceAsyncHTTPClient", package: "ResilienceAsyncHTTPClient"),
                .product(name: "ResilienceLogging", package: "ResilienceLogging"),
                .product(name: "ResilienceMetrics", package: "ResilienceMetrics"),
                .product(name: "ResilienceTracing", package: "ResilienceTracing"),
                .product(name: "ResilienceServiceLifecycle", package: "ResilienceServiceLifecycle"),
                .product(name: "ResilienceOpenAPI", package: "ResilienceOpenAPI"),
                .product(name: "ResiliencePostgreSQL", package: "ResiliencePostgreSQL"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
