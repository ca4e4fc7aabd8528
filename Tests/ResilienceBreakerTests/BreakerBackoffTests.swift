import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("BreakerBackoff and BreakerFailurePredicate")
struct BreakerBackoffTests {
    @Test(arguments: zip(0..<7, [30, 60, 120, 240, 300, 300, 300]))
    func seed004Schedule(tripIndex: Int, expectedSeconds: Int) {
        let cooldown = RateLimitBreaker.Configuration.standard.cooldown
        #expect(cooldown.duration(tripIndex: tripIndex, unit: 0.5) == .seconds(expectedSeconds))
    }

    @Test func jitterBoundsAreExact() {
        let backoff = BreakerBackoff(base: .seconds(60), jitter: 0.3)
        #expect(backoff.duration(tripIndex: 0, unit: 0) == .seconds(42))
        #expect(backoff.duration(tripIndex: 0, unit: 0.5) == .seconds(60))
        #expect(backoff.duration(tripIndex: 0, unit: 1) == .seconds(60))
    }

    @Test func hostileSettingsNeverTrap() {
        let hostile = BreakerBackoff(
            base: .seconds(1), growthFactor: .infinity, maximumMultiplier: .nan, maximum: .seconds(10), jitter: .nan)
        #expect(hostile.duration(tripIndex: Int.max, unit: 0.5) == .seconds(1))
        let huge = BreakerBackoff(
            base: .seconds(1), growthFactor: 1e300, maximumMultiplier: 1e300, maximum: .seconds(1e12))
        #expect(huge.duration(tripIndex: 1000, unit: 0.5) == .seconds(1_000_000_000))
        let negative = BreakerBackoff(base: .seconds(-5), jitter: 5)
        #expect(negative.duration(tripIndex: 0, unit: 0.9) == .zero)
    }

    @Test func standardPredicateCountsServerTroubleOnly() {
        let predicate = BreakerFailurePredicate.standard
        #expect(predicate.counts(Failures.server))
        #expect(predicate.counts(Failures.timeout))
        #expect(predicate.counts(Failures.tooManyRequests))
        #expect(!predicate.counts(Failures.client))
        #expect(!predicate.counts(.cancelled))
        #expect(!BreakerFailurePredicate.allFailures.counts(.cancelled))
        #expect(
            BreakerFailurePredicate.rateLimitedOnly.counts(
                FailureClassification(category: .unknown, code: .unknown, httpStatus: 429)))
        #expect(!BreakerFailurePredicate.rateLimitedOnly.counts(Failures.server))
    }
}
