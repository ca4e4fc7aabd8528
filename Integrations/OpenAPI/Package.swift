// swift-tools-version: 6.0
// ResilienceOpenAPI: a swift-openapi-runtime ClientMiddleware that runs each generated-client operation through
// a resilience pipeline, and a ClientTransport over any ResilienceKit HTTPTransport.
import PackageDescription

let strictSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "ResilienceOpenAPI",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ResilienceOpenAPI", targets: ["ResilienceOpenAPI"])
    ],
    dependencies: [
        .package(name: "ResilienceKit", path: "../.."),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "ResilienceOpenAPI",
            dependencies: [
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResilienceTransport", package: "ResilienceKit"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ResilienceOpenAPITests",
            dependencies: [
                "ResilienceOpenAPI",
                .product(name: "ResilienceCore", package: "ResilienceKit"),
                .product(name: "ResilienceTransport", package: "ResilienceKit"),
                .product(name: "ResiliencePolicies", package: "ResilienceKit"),
                .product(name: "ResilienceTesting", package: "ResilienceKit"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
