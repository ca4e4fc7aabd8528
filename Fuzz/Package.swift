// swift-tools-version: 6.0
// libFuzzer targets for ResilienceKit's parsers of untrusted input. One executable target per fuzz target,
// each with its seed corpus in `Corpus/<TargetName>/`. Build and run with `Fuzz/build.sh` (see Fuzz/README.md).
import PackageDescription

let package = Package(
    name: "ResilienceFuzz",
    dependencies: [.package(name: "ResilienceKit", path: "..")],
    targets: [
        .executableTarget(
            name: "RetryAfterFuzzer",
            dependencies: [.product(name: "ResilienceTransport", package: "ResilienceKit")]
        ),
        .executableTarget(
            name: "RateLimitFieldsFuzzer",
            dependencies: [.product(name: "ResilienceTransport", package: "ResilienceKit")]
        ),
        .executableTarget(
            name: "ErrorBodyFuzzer",
            dependencies: [.product(name: "ResilienceTransport", package: "ResilienceKit")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
