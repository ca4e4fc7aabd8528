import Benchmark
import BenchmarkSupport
import ResilienceKit
import ResilienceTelemetry

/// The five-stage pipeline of issue 2 §6 with the telemetry recorder attached (compare with
/// PipelineOverhead's "pipeline: five stages").
func registerPipelineWithRecorderBenchmarks() {
    let random = SharedRandomSource(seed: 1)
    let pipeline = Pipeline {
        TotalDeadlineStrategy(.seconds(30))
        RetryStrategy(policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: random)
        CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: random))
        RateLimiterStrategy(limiter: TokenBucketLimiter(.rate(1e12, burst: 1_000_000_000)))
        TimeoutStrategy(.seconds(10))
    }
    let recorded = context(TelemetryRecorder(clock: benchClock))
    Benchmark("pipeline: five stages + recorder", configuration: perOperation) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await pipeline.execute(recorded) { _ in await bare() })
        }
    }
}

@inline(never) func bare() async -> Int { 1 }
