import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Retry policies")
struct RetryPolicyTests {
    let noJitter = StandardRetryPolicy(
        maxAttempts: 4, backoff: .exponential(base: .seconds(1), multiplier: 2, cap: .seconds(30)), jitter: .none)

    func decide(_ policy: some RetryPolicy, _ attempt: RetryAttempt, seed: UInt64 = 1) -> RetryDecision {
        var random = SeededRandomNumberGenerator(seed: seed)
        return policy.decide(attempt, using: &random)
    }

    @Test("Backoff schedule and attempts exhausted")
    func schedule() {
        let delays = (1...3).map { decide(noJitter, RetryAttempt(number: $0, failure: failure(.serverError))).delay }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4)])
        let last = decide(noJitter, RetryAttempt(number: 4, failure: failure(.serverError)))
        #expect(last.stopReason == .attemptsExhausted)
    }

    @Test(
        "Never retries cancellation, circuit-open or non-transient failures",
        arguments: [
            (FailureClassification.cancelled, RetryDecision.StopReason.cancelled),
            (FailureClassification(category: .circuitOpen, code: .circuitOpen, isTransient: true), .circuitOpen),
            (failure(.clientError, status: 400), .notRetryable),
            (FailureClassification.unknown, .notRetryable),
        ])
    func neverRetries(classification: FailureClassification, reason: RetryDecision.StopReason) {
        for policy in [StandardRetryPolicy.standard, .interactive, .background, .apiClient] {
            #expect(decide(policy, RetryAttempt(number: 1, failure: classification)).stopReason == reason)
        }
        #expect(
            decide(CategoryRetryPolicy.standard, RetryAttempt(number: 1, failure: classification)).stopReason == reason)
    }

    @Test("Idempotency guard: non-idempotent retried only with a key or when nothing was sent")
    func idempotencyGuard() {
        let sent = failure(.serverError, status: 503)
        var unsent = failure(.networkUnreachable)
        unsent.requestWasNotSent = true
        #expect(
            decide(noJitter, RetryAttempt(number: 1, failure: sent, idempotency: .nonIdempotent)).stopReason
                == .notIdempotent)
        #expect(decide(noJitter, RetryAttempt(number: 1, failure: sent, idempotency: .keyed("k"))).shouldRetry)
        #expect(decide(noJitter, RetryAttempt(number: 1, failure: unsent, idempotency: .nonIdempotent)).shouldRetry)
    }

    @Test("Retry-After is honoured, stops beyond the maximum, or is clamped")
    func retryAfter() {
        let hinted = failure(.rateLimited, status: 429, retryAfter: .seconds(42))
        let decision = decide(noJitter, RetryAttempt(number: 1, failure: hinted))
        #expect(decision.delay == .seconds(42))
        #expect(decision.source == "retry-after")
        let tooLong = failure(.rateLimited, status: 429, retryAfter: .seconds(301))
        #expect(decide(noJitter, RetryAttempt(number: 1, failure: tooLong)).stopReason == .retryAfterTooLong)
        var clamping = noJitter
        clamping.retryAfter = RetryAfterRule(maximum: .seconds(300), whenLonger: .clamp, countsAsAttempt: false)
        let clamped = decide(clamping, RetryAttempt(number: 1, failure: tooLong))
        #expect(clamped.delay == .seconds(300))
        #expect(clamped.countsAsAttempt == false)
        var ignoring = noJitter
        ignoring.retryAfter.honoursHint = false
        #expect(decide(ignoring, RetryAttempt(number: 1, failure: hinted)).delay == .seconds(1))
    }

    @Test("Only the listed categories are retried; elapsed time limit")
    func categoriesAndElapsed() {
        var policy = noJitter
        policy.retriedCategories = [.serverError]
        #expect(decide(policy, RetryAttempt(number: 1, failure: failure(.timeout))).stopReason == .notRetryable)
        #expect(decide(policy, RetryAttempt(number: 1, failure: failure(.serverError))).shouldRetry)
        policy.maxElapsed = .seconds(10)
        let late = RetryAttempt(number: 1, failure: failure(.serverError), elapsed: .seconds(10))
        #expect(decide(policy, late).stopReason == .timeExhausted)
    }

    @Test(
        "Seed 000 §2.2 and Appendix B: per-category table by status",
        arguments: [
            (FailureCategory.timeout, 408, [1.0, 2.0], 3),
            (.timeout, 504, [1.0, 2.0], 3),
            (.rateLimited, 429, [5.0, 10.0], 2),
            (.serverError, 500, [2.0, 4.0], 3),
            (.serverError, 503, [2.0, 4.0], 3),
            (.transient, 502, [1.0, 2.0], 3),
            (.serverError, 504, [1.0, 2.0], 3),
            (.serverError, 408, [1.0, 2.0], 3),
            (.transient, 429, [5.0, 10.0], 2),
            (.rateLimited, 503, [5.0, 10.0], 2),
        ])
    func categoryTable(category: FailureCategory, status: Int, expected: [Double], maxAttempts: Int) {
        var policy = CategoryRetryPolicy.standard
        policy.rules = policy.rules.mapValues { rule in
            var rule = rule
            rule.jitter = .none
            return rule
        }
        let failed = failure(category, status: status)
        for (index, seconds) in expected.enumerated() where index + 1 < maxAttempts {
            #expect(decide(policy, RetryAttempt(number: index + 1, failure: failed)).delay == .seconds(seconds))
        }
        #expect(decide(policy, RetryAttempt(number: maxAttempts, failure: failed)).stopReason == .attemptsExhausted)
    }

    @Test(
        "Seed 000 §2.2: 501 and 4xx are never retried, even if marked transient",
        arguments: [400, 401, 403, 404, 422, 501])
    func neverStatuses(status: Int) {
        let failed = FailureClassification(
            category: status == 501 ? .serverError : .clientError, code: "T", httpStatus: status, isTransient: true)
        #expect(
            decide(CategoryRetryPolicy.standard, RetryAttempt(number: 1, failure: failed)).stopReason == .notRetryable)
    }

    @Test("Appendix B jitter: rate limits ±30 %, server errors ±20 %")
    func appendixJitter() {
        for seed in 1...200 {
            let rate = decide(
                CategoryRetryPolicy.standard, RetryAttempt(number: 1, failure: failure(.rateLimited, status: 429)),
                seed: UInt64(seed))
            #expect((3.5...6.5).contains(rate.delay!.seconds))
            let server = decide(
                CategoryRetryPolicy.standard, RetryAttempt(number: 1, failure: failure(.serverError, status: 500)),
                seed: UInt64(seed))
            #expect((1.6...2.4).contains(server.delay!.seconds))
        }
    }

    @Test(
        "The standard and background policies draw full jitter over 1 s ×2 and say the delay before jitter",
        arguments: [StandardRetryPolicy.standard, .background])
    func fullJitterPresets(policy: StandardRetryPolicy) {
        for number in 1...2 {
            let unjittered = Double(1 << (number - 1))
            let delays = (1...200).map { seed in
                let decision = decide(
                    policy, RetryAttempt(number: number, failure: failure(.serverError)), seed: UInt64(seed))
                #expect(decision.unjitteredDelay?.seconds == unjittered)
                return decision.delay!.seconds
            }
            // Spread over the whole delay, not ±20 % of it.
            #expect(delays.allSatisfy { (0...unjittered).contains($0) })
            #expect(delays.min()! < 0.1 * unjittered && delays.max()! > 0.9 * unjittered)
        }
    }

    @Test("Seed 002 preset: 1 s doubling plus 0–500 ms, 3 attempts")
    func apiClientPreset() {
        for seed in 1...100 {
            let first = decide(
                StandardRetryPolicy.apiClient, RetryAttempt(number: 1, failure: failure(.serverError)),
                seed: UInt64(seed))
            let second = decide(
                StandardRetryPolicy.apiClient, RetryAttempt(number: 2, failure: failure(.serverError)),
                seed: UInt64(seed))
            #expect((1.0...1.5).contains(first.delay!.seconds))
            #expect((2.0...2.5).contains(second.delay!.seconds))
        }
        #expect(
            decide(StandardRetryPolicy.apiClient, RetryAttempt(number: 3, failure: failure(.serverError))).stopReason
                == .attemptsExhausted)
    }

    @Test("The conformance kit passes every policy this module ships")
    func conformance() async throws {
        let policies: [any RetryPolicy] = [
            StandardRetryPolicy.standard, StandardRetryPolicy.interactive, StandardRetryPolicy.background,
            StandardRetryPolicy.apiClient, StandardRetryPolicy.rateLimitManager, CategoryRetryPolicy.standard,
            StandardRetryPolicy(maxAttempts: .max, backoff: .decorrelated(base: .seconds(1), cap: .seconds(60))),
            StandardRetryPolicy(
                maxAttempts: .max, retryAfter: RetryAfterRule(whenLonger: .clamp, countsAsAttempt: false)),
        ]
        for policy in policies {
            try await RetryPolicyConformance(policy).check()
        }
    }

    @Test("The conformance kit catches a policy that breaks the contract")
    func conformanceCatchesViolations() async {
        struct Reckless: RetryPolicy {
            func decide<R: RandomNumberGenerator>(_ attempt: RetryAttempt, using random: inout R) -> RetryDecision {
                .retry(after: .seconds(Int64(attempt.number)) * Int(random.next() % 2 + 1))
            }
        }
        let report = await RetryPolicyConformance(Reckless()).run()
        let rules = Set(report.violations.map(\.rule))
        #expect(report.result("deterministic")?.passed == true)
        #expect(report.result("never-retries-cancelled-circuit-open-or-permanent")?.passed == false)
        #expect(rules.contains("never-retries-cancelled"))
        #expect(rules.contains("never-retries-circuit-open"))
        #expect(rules.contains("idempotency-guard"))
        #expect(rules.contains("capped-non-negative-delay"))
        #expect(rules.contains("deterministic") == false)
        await #expect(throws: ConformanceFailure.self) { try await RetryPolicyConformance(Reckless()).check() }
    }
}
