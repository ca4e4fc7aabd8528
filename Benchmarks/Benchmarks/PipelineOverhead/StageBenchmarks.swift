import Benchmark
import BenchmarkSupport
import ResilienceKit

/// Each strategy alone around the bare call (its own `execute(_:next:)`), then in a `Pipeline` after a total
/// deadline, the way clients run it: the row minus `in pipeline: total deadline` (the pipeline with the deadline
/// alone) is what the stage adds to a pipeline.
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
    register("total deadline", TotalDeadlineStrategy(.seconds(30)), inPipeline: false)
    register("fallback", FallbackStrategy<Int>(.value("zero", 0)))
    register("hedging", HedgingStrategy(delay: .seconds(10)))
    // Chaos stages shipped switched off: the cost is the switch's read (Docs/Chaos.md).
    let off = try! ChaosInjection(rate: 1, enabled: ChaosSwitch(isEnabled: false), random: random)
    register("chaos fault, switched off", ChaosFaultStrategy(off))
    register("chaos latency, switched off", try! ChaosLatencyStrategy(off, latency: .seconds(1)))
    register("chaos behaviour, switched off", ChaosBehaviourStrategy(off) { _ in })
    register("chaos outcome, switched off", ChaosOutcomeStrategy(off, outcome: 0))
    // The baseline of every `in pipeline:` row.
    benchmarkPipeline("in pipeline: total deadline", Pipeline { TotalDeadlineStrategy(.seconds(60)) })
}

/// The stage alone, and (unless `inPipeline` is false) in a `Pipeline` after a total deadline.
private func register(_ name: String, _ stage: some ResilienceStrategy, inPipeline: Bool = true) {
    benchmarkStage("stage: \(name)", stage)
    guard inPipeline else { return }
    benchmarkPipeline(
        "in pipeline: \(name)",
        Pipeline {
            TotalDeadlineStrategy(.seconds(60))
            stage
        })
}

/// A token bucket that never runs dry during a benchmark: the success path only.
func unlimitedBucket() -> TokenBucketLimiter {
    TokenBucketLimiter(.rate(1e12, burst: 1_000_000_000))
}
