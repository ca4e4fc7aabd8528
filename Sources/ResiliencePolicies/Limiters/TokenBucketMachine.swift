/// The state machine behind ``TokenBucketLimiter``: a value type that takes `now`.
struct TokenBucketMachine: Sendable {
    let burst: Double
    let refillPerSecond: Double
    let maximumWait: Duration?
    let exhaustionBackoff: BreakerBackoff?
    var tokens: Double
    var lastRefill: ResilienceInstant?
    var refusalsInARow = 0
    var generator: PseudoRandomGenerator

    init(configuration: TokenBucketLimiter.Configuration, generator: PseudoRandomGenerator) {
        burst = Double(max(1, configuration.burst))
        let rate = configuration.refillPerSecond
        refillPerSecond = rate.isFinite && rate > 0 ? rate : 0
        maximumWait = configuration.maximumWait
        exhaustionBackoff = configuration.exhaustionBackoff
        tokens = burst
        self.generator = generator
    }

    mutating func refill(now: ResilienceInstant) {
        defer { lastRefill = now }
        guard let lastRefill, lastRefill < now else { return }
        let elapsed = DurationArithmetic.seconds(lastRefill.duration(to: now))
        tokens = min(burst, tokens + elapsed * refillPerSecond)
    }

    mutating func acquire(now: ResilienceInstant) -> RateLimitDecision {
        refill(now: now)
        if tokens >= 1 {
            tokens -= 1
            return .admitted(RateLimitPermit(token: 0, admittedAt: now))
        }
        guard refillPerSecond > 0 else { return .rejected(.rateLimited, retryAfter: nil) }
        var wait = DurationArithmetic.duration(seconds: (1 - tokens) / refillPerSecond)
        if let exhaustionBackoff {
            wait = max(wait, exhaustionBackoff.duration(tripIndex: refusalsInARow, using: &generator))
            refusalsInARow = min(refusalsInARow + 1, 64)
        }
        if let maximumWait, wait > maximumWait { return .rejected(.rateLimited, retryAfter: wait) }
        return .delayed(retryAfter: wait)
    }

    mutating func release(outcome: RateLimitOutcome) {
        if outcome == .accepted { refusalsInARow = 0 }
    }
}
