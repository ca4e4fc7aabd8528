import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("TokenBucketLimiter", .timeLimit(.minutes(1)))
struct TokenBucketLimiterTests {
    @Test func burstThenRefill() {
        let limiter = TokenBucketLimiter(.rate(2, burst: 3))
        for _ in 0..<3 { #expect(limiter.tryAcquire(now: at(0)).permit != nil) }
        #expect(limiter.tryAcquire(now: at(0)) == .delayed(retryAfter: .milliseconds(500)))
        #expect(limiter.tryAcquire(now: at(0.25)) == .delayed(retryAfter: .milliseconds(250)))
        #expect(limiter.tryAcquire(now: at(0.5)).permit != nil)
        #expect(limiter.tryAcquire(now: at(0.5)) == .delayed(retryAfter: .milliseconds(500)))
        #expect(abs(limiter.availableTokens(now: at(100)) - 3) < 1e-9)
    }

    @Test("A wait shorter than a nanosecond is never zero, so a waiter on a virtual clock makes progress")
    func subNanosecondWaitsRoundUp() {
        let limiter = TokenBucketLimiter(.rate(3, burst: 1))
        let start = ResilienceInstant(offset: .zero)
        #expect(limiter.tryAcquire(now: start).permit != nil)
        // A third of a second, truncated to whole nanoseconds, leaves the bucket 1e-9 tokens short.
        guard case .delayed(let wait) = limiter.tryAcquire(now: start.advanced(by: .nanoseconds(333_333_333))) else {
            Issue.record("expected a delay")
            return
        }
        #expect(wait > .zero)
    }

    @Test func waitsLongerThanTheMaximumAreRejected() {
        var configuration = TokenBucketLimiter.Configuration.rate(0.1, burst: 1)
        configuration.maximumWait = .seconds(5)
        let limiter = TokenBucketLimiter(configuration)
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        #expect(limiter.tryAcquire(now: at(0)) == .rejected(.rateLimited, retryAfter: .seconds(10)))
        #expect(limiter.tryAcquire(now: at(6)) == .delayed(retryAfter: .seconds(4)))
    }

    @Test func exhaustionBackoffGrowsAndResetsOnSuccess() {
        let limiter = TokenBucketLimiter(.backingOffWithoutJitter)
        let permit = limiter.tryAcquire(now: at(0)).permit!
        let waits = (0..<10).map { _ in limiter.tryAcquire(now: at(0)) }
        let expected: [RateLimitDecision] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 300].map {
            .delayed(retryAfter: .seconds($0))
        }
        #expect(waits == expected)
        limiter.release(permit, outcome: .accepted, now: at(0))
        #expect(limiter.tryAcquire(now: at(0)) == .delayed(retryAfter: .seconds(1)))
    }

    @Test("A caller waiting out the exhaustion backoff is not overtaken by one arriving while it waits")
    func backoffWaitersKeepTheirTurn() async throws {
        let limiter = TokenBucketLimiter(.backingOffWithoutJitter)
        let clock = ManualClock()
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        #expect(limiter.tryAcquire(now: context.clock.now()).permit != nil)
        // The bucket refills in 10 ms, but the waiter is told the backoff's 1 s and books its token for then.
        let waiter = Task { try await limiter.waitForPermit(context: context).admittedAt }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(500))
        // The bucket is full again by now; a newcomer still waits for the caller ahead of it.
        let newcomer = limiter.tryAcquire(now: context.clock.now())
        #expect(newcomer.permit == nil, "\(newcomer)")
        if case .delayed(let wait) = newcomer { #expect(wait >= .milliseconds(500)) }
        clock.advance(by: .milliseconds(500))
        #expect(try await waiter.value == ResilienceInstant(offset: .seconds(1)))
        // Once the waiter's turn has come, the refilled bucket admits again.
        let permit = limiter.tryAcquire(now: context.clock.now()).permit
        #expect(permit != nil)
    }

    @Test func zeroRateNeverHangs() {
        let limiter = TokenBucketLimiter(.rate(0, burst: 1))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        #expect(limiter.tryAcquire(now: at(1000)) == .rejected(.rateLimited, retryAfter: nil))
    }

    @Test func describesItself() {
        #expect(TokenBucketLimiter(.rate(2, burst: 5)).policyDescription == "token-bucket(burst: 5, refill: 2.0/s)")
    }

    @Test("A token bucket never moves its refill time backwards for a caller holding an older instant")
    func refillNeverGoesBackwards() {
        let bucket = TokenBucketLimiter(.rate(1, burst: 2))
        #expect(bucket.tryAcquire(now: at(10)).permit != nil)
        #expect(bucket.tryAcquire(now: at(9)).permit != nil)
        #expect(bucket.availableTokens(now: at(10)) == 0)
        #expect(bucket.availableTokens(now: at(11)) == 1)
    }
}
