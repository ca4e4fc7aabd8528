import Benchmark
import ResilienceCore

/// Per-operation numbers: 1,000 operations (calls, events) per measured iteration, reported per operation with
/// `--scale`, so the tool's "μs" column reads as nanoseconds per operation.
public var perOperation: Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 2_000
    )
}

/// The clock every benchmark uses: the production default, `ContinuousClock`.
public let benchClock = ResilienceClock(ContinuousClock())
