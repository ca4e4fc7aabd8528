import Benchmark
import ResilienceKit

/// Each strategy alone around the bare call.
func registerStageBenchmarks() {
    let random = SharedRandomSource(seed: 1)
    benchmarkStage("stage: retry", RetryStrategy(policy: StandardRetryPolicy.standard, random: random))
    benchmarkStage(
        "stage: retry + budget",
        RetryStrategy(policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: random))
    benchmarkStage(
        "stage: breaker consecutive-failures",
        CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: random)))
    benchmarkStage(
        "stage: breaker failure-ratio", CircuitBreakerStrategy(breaker: FailureRatioBreaker(.standard, random: random)))
    benchmarkStage(
        "stage: breaker rate-limit", CircuitBreakerStrategy(breaker: RateLimitBreaker(.standard, random: random)))
    benchmarkStage("stage: limiter token-bucket", RateLimiterStrategy(limiter: unlimitedBucket()))
    benchmarkStage("stage: limiter concurrency", RateLimiterStrategy(limiter: ConcurrencyLimiter(.standard)))
    benchmarkStage("stage: limiter adaptive-throttle", RateLimiterStrategy(limiter: AdaptiveThrottle(.standard)))
    benchmarkStage("stage: timeout cooperative", TimeoutStrategy(.seconds(10)))
    benchmarkStage("stage: timeout enforced", TimeoutStrategy(.seconds(10), mode: .enforced))
    benchmarkStage("stage: total deadline", TotalDeadlineStrategy(.seconds(30)))
    benchmarkStage("stage: fallback", FallbackStrategy<Int>(.value("zero", 0)))
    benchmarkStage("stage: hedging", HedgingStrategy(delay: .seconds(10)))
}

/// A token bucket that never runs dry during a benchmark: the success path only.
func unlimitedBucket() -> TokenBucketLimiter {
    TokenBucketLimiter(.rate(1e12, burst: 1_000_000_000))
}
