// swift-tools-version: 6.0
// libFuzzer targets for ResilienceKit's parsers of untrusted input. Not part of the library's build. One
// executable target per fuzz target (a main.swift defining LLVMFuzzerTestOneInput; libFuzzer supplies main),
// each with its minimised corpus in `Corpus/<TargetName>/`. Build with `Fuzz/build.sh`; CI replays every
// corpus with `.ci/fuzz-replay.sh`.
import PackageDescription

/// A fuzz target over one library product.
func fuzzer(_ name: String, _ product: String) -> Target {
    .executableTarget(name: name, dependencies: [.product(name: product, package: "ResilienceKit")])
}

let package = Package(
    name: "ResilienceFuzz",
    dependencies: [.package(name: "ResilienceKit", path: "..")],
    targets: [
        fuzzer("RetryAfterFuzzer", "ResilienceTransport"),
        fuzzer("RateLimitFieldsFuzzer", "ResilienceTransport"),
        fuzzer("ErrorBodyFuzzer", "ResilienceTransport"),
        fuzzer("FeedParserFuzzer", "ResilienceSources"),
        fuzzer("FeedDateFuzzer", "ResilienceSources"),
        fuzzer("StructuredFieldFuzzer", "ResilienceCore"),
        fuzzer("HTTPCacheFuzzer", "ResilienceTransport"),
    ],
    swiftLanguageModes: [.v6]
)
