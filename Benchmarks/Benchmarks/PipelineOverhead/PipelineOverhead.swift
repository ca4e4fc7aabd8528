import Benchmark
import BenchmarkSupport
import ResilienceKit

let benchmarks: @Sendable () -> Void = {
    Benchmark("bare async call", configuration: perOperation) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(await bare()) }
    }
    registerClockBenchmarks()
    registerStageBenchmarks()
    registerPipelineBenchmarks()
    registerRawPolicyBenchmarks()
    registerContentionBenchmarks()
}

/// What one clock read costs: the reason stages avoid reading it.
func registerClockBenchmarks() {
    Benchmark("clock: ContinuousClock.now", configuration: perOperation) { benchmark in
        let clock = ContinuousClock()
        for _ in benchmark.scaledIterations { blackHole(clock.now) }
    }
    Benchmark("clock: ResilienceClock.now()", configuration: perOperation) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(benchClock.now()) }
    }
}
