import Benchmark
import ResilienceKit

/// Each strategy alone around the bare call, then each inside a total deadline (the deadline stage reads
/// the clock once for the execution; the stage inside reuses that instant, as it does in a pipeline).
func registerStageBenchmarks() {
    let random = SharedRandomSource(seed: 1)
    // Static types on purpose: each call is specialised for its stage, as in a client's code.
    register("retry", RetryStrategy(policy: StandardRetryPolicy.standard, random: random))
    register(
        "retry + budget",
        RetryStrategy(policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: random))
    register(
        "breaker consecutive-failures",
        CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: random)))
    register("breaker failure-ratio", CircuitBreakerStrategy(breaker: FailureRatioBreaker(.standard, random: random)))
    register("breaker rate-limit", CircuitBreakerStrategy(breaker: RateLimitBreaker(.standard, random: random)))
    register("limiter token-bucket", RateLimiterStrategy(limiter: unlimitedBucket()))
    register("limiter concurrency", RateLimiterStrategy(limiter: ConcurrencyLimiter(.standard)))
    register("limiter adaptive-throttle", RateLimiterStrategy(limiter: AdaptiveThrottle(.standard)))
    register("adaptive concurrency", AdaptiveConcurrencyStage(limiter: AdaptiveConcurrencyLimiter()))
    register("timeout cooperative", TimeoutStrategy(.seconds(10)))
    register("timeout enforced", TimeoutStrategy(.seconds(10), mode: .enforced))
    register("total deadline", TotalDeadlineStrategy(.seconds(30)))
    register("fallback", FallbackStrategy<Int>(.value("zero", 0)))
    register("hedging", HedgingStrategy(delay: .seconds(10)))
    // Chaos stages shipped switched off: the cost is the switch's read (Docs/Chaos.md).
    let off = try! ChaosInjection(rate: 1, enabled: ChaosSwitch(isEnabled: false), random: random)
    register("chaos fault, switched off", ChaosFaultStrategy(off))
    register("chaos latency, switched off", try! ChaosLatencyStrategy(off, latency: .seconds(1)))
    register("chaos behaviour, switched off", ChaosBehaviourStrategy(off) { _ in })
    register("chaos outcome, switched off", ChaosOutcomeStrategy(off, outcome: 0))
    // Inside a `Pipeline`, as one chain of steps with one clock reading (the outcome stage is not a stepped
    // stage, so its pipeline runs stage by stage): the switched-off stage's cost is its row minus the first.
    benchmarkPipeline("in pipeline: total deadline", Pipeline { TotalDeadlineStrategy(.seconds(60)) })
    benchmarkPipeline(
        "in pipeline: chaos fault, switched off",
        Pipeline {
            TotalDeadlineStrategy(.seconds(60))
            ChaosFaultStrategy(off)
        })
    benchmarkPipeline(
        "in pipeline: chaos latency, switched off",
        Pipeline {
            TotalDeadlineStrategy(.seconds(60))
            try! ChaosLatencyStrategy(off, latency: .seconds(1))
        })
    benchmarkPipeline(
        "in pipeline: chaos behaviour, switched off",
        Pipeline {
            TotalDeadlineStrategy(.seconds(60))
            ChaosBehaviourStrategy(off) { _ in }
        })
}

/// The stage alone, and inside a total deadline.
private func register(_ name: String, _ stage: some ResilienceStrategy) {
    benchmarkStage("stage: \(name)", stage)
    benchmarkStage("in deadline: \(name)", ComposedStrategy(outer: TotalDeadlineStrategy(.seconds(60)), inner: stage))
}

/// A token bucket that never runs dry during a benchmark: the success path only.
func unlimitedBucket() -> TokenBucketLimiter {
    TokenBucketLimiter(.rate(1e12, burst: 1_000_000_000))
}
