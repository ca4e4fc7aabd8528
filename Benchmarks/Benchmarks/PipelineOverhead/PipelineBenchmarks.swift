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

/// The same five stages as one concrete value (what `Pipeline`'s builder produces before it is stored as an
/// existential): calls specialise for the operation's output type in the caller's module.
@PipelineBuilder func fiveStageChain() -> some ResilienceStrategy {
    let random = SharedRandomSource(seed: 1)
    TotalDeadlineStrategy(.seconds(30))
    RetryStrategy(policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: random)
    CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: random))
    RateLimiterStrategy(limiter: unlimitedBucket())
    TimeoutStrategy(.seconds(10))
}

func registerPipelineBenchmarks() {
    benchmarkPipeline("pipeline: passthrough", PassthroughPipeline())
    benchmarkPipeline("pipeline: five stages", fiveStagePipeline())
    benchmarkPipeline("pipeline: five stages + counting sink", fiveStagePipeline(), context: listenedContext)
    benchmarkStage("pipeline: five stages, concrete chain", fiveStageChain())
    benchmarkPipeline(
        "pipeline: standard preset",
        Pipeline.standard(clock: benchClock, random: SharedRandomSource(seed: 1)) {
            $0.limiter = .tokenBucket(.rate(1e12, burst: 1_000_000_000))
        })
}
