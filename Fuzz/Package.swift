// swift-tools-version: 6.0
// Coverage-guided fuzz targets (libFuzzer). Not part of the library's build: build with
//   swift build --package-path Fuzz -c release --sanitize=fuzzer
// One executable target per fuzz target (a main.swift defining LLVMFuzzerTestOneInput; libFuzzer supplies
// main); seed/minimised corpus in Corpus/<TargetName>/.
import PackageDescription

let package = Package(
    name: "ResilienceFuzz",
    dependencies: [.package(name: "ResilienceKit", path: "..")],
    targets: [
        .executableTarget(
            name: "FeedParserFuzzer",
            dependencies: [.product(name: "ResilienceSources", package: "ResilienceKit")]
        ),
        .executableTarget(
            name: "FeedDateFuzzer",
            dependencies: [.product(name: "ResilienceSources", package: "ResilienceKit")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
