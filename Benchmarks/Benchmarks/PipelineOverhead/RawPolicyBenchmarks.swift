import Benchmark
import BenchmarkSupport
import ResilienceKit

/// The synchronous state machines alone: one `admit` + `record` (breakers) or `tryAcquire` + `release`
/// (limiters) per operation, at a fixed instant (no clock read).
func registerRawPolicyBenchmarks() {
    let random = SharedRandomSource(seed: 1)
    let breakers: [(String, any BreakerPolicy)] = [
        ("consecutive-failures", ConsecutiveFailureBreaker(.standard, random: random)),
        ("failure-ratio", FailureRatioBreaker(.standard, random: random)),
        ("rate-limit", RateLimitBreaker(.standard, random: random)),
    ]
    for (name, breaker) in breakers {
        Benchmark("raw: \(name) admit+record", configuration: perOperation) { benchmark in
            let now = benchClock.now()
            for _ in benchmark.scaledIterations {
                guard case .admitted(let permit, _) = breaker.admit(now: now) else {
                    benchmark.error("breaker rejected")
                    return
                }
                blackHole(breaker.record(.success, for: permit, now: now))
            }
        }
    }
    let limiters: [(String, any RateLimiter)] = [
        ("token-bucket", unlimitedBucket()),
        ("concurrency", ConcurrencyLimiter(.standard)),
        ("adaptive-throttle", AdaptiveThrottle(.standard)),
    ]
    for (name, limiter) in limiters {
        Benchmark("raw: \(name) tryAcquire+release", configuration: perOperation) { benchmark in
            let now = benchClock.now()
            for _ in benchmark.scaledIterations {
                guard case .admitted(let permit) = limiter.tryAcquire(now: now) else {
                    benchmark.error("limiter refused")
                    return
                }
                limiter.release(permit, outcome: .accepted, now: now)
            }
        }
    }
}
