import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("RateLimiterConformance")
struct RateLimiterConformanceTests {
    @Test func tokenBucketConforms() async {
        let report = await RateLimiterConformance { TokenBucketLimiter(.standard, random: SharedRandomSource(seed: 1)) }
            .run()
        #expect(report.conforms, "\(report)")
    }

    @Test func concurrencyLimiterConforms() async {
        let report = await RateLimiterConformance { ConcurrencyLimiter(.standard) }.run()
        #expect(report.conforms, "\(report)")
    }

    @Test func adaptiveThrottleConforms() async {
        let report = await RateLimiterConformance(saturation: .byBackendRejections) {
            AdaptiveThrottle(.standard, random: SharedRandomSource(seed: 1))
        }.run()
        #expect(report.conforms, "\(report)")
    }

    /// Admits everything: not a limiter.
    struct Unlimited: RateLimiter {
        func tryAcquire(now: ResilienceInstant) -> RateLimitDecision { .admitted(RateLimitPermit(admittedAt: now)) }
        func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {}
    }

    /// Delays by a negative amount once full, and its waiter sleeps past any deadline.
    final class Careless: RateLimiter {
        let taken = LockedBox(0)
        func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
            taken.mutate { count in
                count += 1
                return count > 2 ? .delayed(retryAfter: .seconds(-1)) : .admitted(RateLimitPermit(admittedAt: now))
            }
        }
        func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit {
            try await context.clock.sleep(until: context.clock.now().advanced(by: .seconds(60)))
            return RateLimitPermit(admittedAt: context.clock.now())
        }
        func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {}
    }

    @Test func theKitCatchesBrokenLimiters() async {
        let unlimited = await RateLimiterConformance { Unlimited() }.run()
        #expect(unlimited.result("saturates-and-sane-delays")?.passed == false)
        #expect(unlimited.result("fresh-admits")?.passed == true)
        let careless = await RateLimiterConformance { Careless() }.run()
        #expect(careless.result("saturates-and-sane-delays")?.passed == false, "\(careless)")
        #expect(careless.result("wait-admits-when-free")?.passed == false, "\(careless)")
        await #expect(throws: ConformanceFailure.self) { try await RateLimiterConformance { Unlimited() }.check() }
    }
}
