import ResiliencePolicies
import ResilienceTesting
import Testing

/// A third-party trip rule, as the docs show it: opens after `limit` counted failures within `window`,
/// however many successes came between them.
private struct FailuresWithin: BreakerTripRule {
    var limit = 3
    var window: Duration = .seconds(10)
    var failures: [ResilienceInstant] = []

    mutating func shouldOpen(
        afterCallFailed failed: Bool, admittedAt: ResilienceInstant, now: ResilienceInstant
    )
        -> Bool
    {
        failures.removeAll { $0.duration(to: now) > window }
        if failed { failures.append(now) }
        return failures.count >= limit
    }

    mutating func clear() { failures.removeAll() }
}

@Suite("Custom breakers on the shared state machine")
struct CustomBreakerTests {
    private func makeBreaker() -> CircuitBreaker<FailuresWithin> {
        CircuitBreaker(
            FailuresWithin(),
            openDuration: BreakerBackoff(
                base: .seconds(5), growthFactor: 2, maximumMultiplier: 4, maximum: .seconds(20)),
            name: "failures-within")
    }

    @Test func aRuleOfAFewLinesIsAWholeBreaker() {
        let breaker = makeBreaker()
        let start = ResilienceInstant.origin
        // Successes between the failures do not save it: three failures within 10 s open it.
        call(breaker, .failure(Failures.server), at: start)
        call(breaker, .success, at: start.advanced(by: .seconds(1)))
        call(breaker, .failure(Failures.server), at: start.advanced(by: .seconds(2)))
        call(breaker, .success, at: start.advanced(by: .seconds(3)))
        let trip = call(breaker, .failure(Failures.server), at: start.advanced(by: .seconds(4)))
        #expect(trip == BreakerTransition(from: .closed, to: .open, openFor: .seconds(5)))
        #expect(breaker.admit(now: start.advanced(by: .seconds(8))).rejection?.retryAfter == .seconds(1))
        // The state machine supplies half-open: one probe, whose failure reopens for the next period.
        let probe = breaker.admit(now: start.advanced(by: .seconds(9)))
        #expect(probe.transition == BreakerTransition(from: .open, to: .halfOpen))
        #expect(probe.permit?.isProbe == true)
        #expect(breaker.admit(now: start.advanced(by: .seconds(9))).rejection?.state == .halfOpen)
        if let permit = probe.permit {
            let reopened = breaker.record(.failure(Failures.server), for: permit, now: start.advanced(by: .seconds(9)))
            #expect(reopened?.openFor == .seconds(10))
        }
        #expect(breaker.withRule { $0.failures.isEmpty } == true)
        #expect(breaker.policyDescription.hasPrefix("failures-within("))
    }

    @Test func failuresSpreadWiderThanTheWindowDoNotOpenIt() {
        let breaker = makeBreaker()
        for second in stride(from: 0, to: 60, by: 6) {
            call(breaker, .failure(Failures.server), at: ResilienceInstant.origin.advanced(by: .seconds(second)))
        }
        #expect(breaker.metrics(now: ResilienceInstant.origin.advanced(by: .seconds(60))).state == .closed)
    }

    @Test func aCustomBreakerMeetsTheBreakerContract() async throws {
        try await BreakerPolicyConformance { makeBreaker() }.check()
        try await BreakerPolicyConformance {
            CircuitBreaker(ConsecutiveFailuresRule(threshold: 2), openDuration: .constant(.seconds(1)), name: "two")
        }.check()
    }

    @Test func theConsecutiveFailuresRuleCountsOnlyFailuresInARow() {
        var rule = ConsecutiveFailuresRule(threshold: 2)
        let now = ResilienceInstant.origin
        let verdicts = [true, false, true, true].map { rule.shouldOpen(afterCallFailed: $0, admittedAt: now, now: now) }
        #expect(verdicts == [false, false, false, true])
        rule.clear()
        #expect(rule.failures == 0)
        #expect(ConsecutiveFailuresRule(threshold: 0).threshold == 1)
    }
}
