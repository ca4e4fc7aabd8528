import Benchmark
import ResilienceKit

/// The five-stage pipeline of issue 2 §6 (the same five strategies as Polly v8's published benchmark).
func fiveStagePipeline() -> Pipeline {
    let random = SharedRandomSource(seed: 1)
    return Pipeline {
        TotalDeadlineStrategy(.seconds(30))
        RetryStrategy(policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: random)
        CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: random))
        RateLimiterStrategy(limiter: unlimitedBucket())
        TimeoutStrategy(.seconds(10))
    }
}

func registerPipelineBenchmarks() {
    benchmarkPipeline("pipeline: passthrough", PassthroughPipeline())
    benchmarkPipeline("pipeline: five stages", fiveStagePipeline())
    benchmarkPipeline("pipeline: five stages + counting sink", fiveStagePipeline(), context: listenedContext)
}
