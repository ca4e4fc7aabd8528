/// A conformance kit a third party runs against its own ``RetryPolicy``, from any test framework.
///
/// It checks the protocol's contract: never retries cancellation, circuit-open or non-transient failures;
/// honours the idempotency guard; delays are non-negative and capped even at attempt 10,000 and with huge
/// server hints; the same seed gives the same decisions. Violations come back as values
/// (``violations()``) or as a thrown ``Failure`` (``check()``).
///
/// ```swift
/// @Test func conforms() throws {
///     try RetryPolicyConformance(MyPolicy()).check()
/// }
/// ```
public struct RetryPolicyConformance: Sendable {
    /// One broken rule.
    public typealias Violation = ConformanceViolation

    /// Every violation found by `check()`, thrown as one error.
    public typealias Failure = ConformanceFailure

    /// The policy under test.
    public var policy: any RetryPolicy
    /// The largest delay considered capped (default one hour).
    public var maximumDelay: Duration
    /// The seed for the generators.
    public var seed: UInt64

    /// Creates the kit for `policy`.
    public init(_ policy: any RetryPolicy, maximumDelay: Duration = .seconds(3600), seed: UInt64 = 0x5EED) {
        self.policy = policy
        self.maximumDelay = maximumDelay
        self.seed = seed
    }

    /// Throws ``Failure`` when any rule is broken.
    public func check() throws {
        let found = violations()
        if !found.isEmpty { throw Failure(subject: "RetryPolicy", violations: found) }
    }

    /// Every broken rule; empty when the policy conforms.
    public func violations() -> [Violation] {
        var found: [Violation] = []
        var random = PseudoRandomGenerator(seed: seed)
        let numbers = [1, 2, 3, 10, 100, 10_000, Int.max / 2]
        let idempotencies: [Idempotency] = [.idempotent, .keyed("conformance"), .nonIdempotent]

        for number in numbers {
            for idempotency in idempotencies {
                for failure in Self.mustStop {
                    let decision = policy.decide(
                        RetryAttempt(number: number, failure: failure, idempotency: idempotency), using: &random)
                    if decision.shouldRetry {
                        found.append(
                            Violation(
                                rule: "never-retries-\(failure.category)",
                                detail: "attempt \(number), \(idempotency), \(failure): \(decision)"))
                    }
                }
                let unsent = Self.transient(requestWasNotSent: false)
                let decision = policy.decide(
                    RetryAttempt(number: number, failure: unsent, idempotency: .nonIdempotent), using: &random)
                if decision.shouldRetry {
                    found.append(
                        Violation(
                            rule: "idempotency-guard",
                            detail: "retried a non-idempotent request that may have been sent: \(decision)"))
                }
            }
            for failure in Self.retryable {
                for previous in [nil, Duration.seconds(1), Duration.seconds(1_000_000_000)] {
                    let decision = policy.decide(
                        RetryAttempt(number: number, failure: failure, previousDelay: previous), using: &random)
                    if let delay = decision.delay, delay < .zero || delay > maximumDelay {
                        found.append(
                            Violation(
                                rule: "capped-non-negative-delay",
                                detail: "attempt \(number), \(failure): \(delay) outside 0...\(maximumDelay)"))
                    }
                }
            }
        }
        found += determinismViolations()
        var unique: [Violation] = []
        for violation in found where !unique.contains(violation) { unique.append(violation) }
        return unique
    }

    private func determinismViolations() -> [Violation] {
        var first = PseudoRandomGenerator(seed: seed)
        var second = PseudoRandomGenerator(seed: seed)
        for number in 1...20 {
            for failure in Self.retryable {
                let attempt = RetryAttempt(number: number, failure: failure, previousDelay: .seconds(number))
                let a = policy.decide(attempt, using: &first)
                let b = policy.decide(attempt, using: &second)
                if a != b {
                    return [
                        Violation(
                            rule: "deterministic", detail: "attempt \(number), \(failure): \(a) then \(b) for one seed")
                    ]
                }
            }
        }
        return []
    }

    /// Failures every policy must stop on.
    static let mustStop: [FailureClassification] = [
        .cancelled,
        FailureClassification(category: .circuitOpen, code: .circuitOpen, isTransient: false, requestWasNotSent: true),
        FailureClassification(category: .circuitOpen, code: .circuitOpen, isTransient: true, requestWasNotSent: true),
        FailureClassification(category: .cancelled, code: .cancelled, isTransient: true),
        FailureClassification(category: .clientError, code: FailureCode("HTTP_400"), httpStatus: 400),
        FailureClassification(category: .serverError, code: FailureCode("HTTP_500"), isTransient: false),
        .unknown,
    ]

    /// Transient failures a policy may retry, including hostile hints.
    static let retryable: [FailureClassification] = [
        transient(requestWasNotSent: true),
        FailureClassification(category: .serverError, code: FailureCode("HTTP_503"), httpStatus: 503),
        FailureClassification(category: .timeout, code: FailureCode("HTTP_504"), httpStatus: 504),
        FailureClassification(
            category: .rateLimited, code: FailureCode("HTTP_429"), httpStatus: 429, retryAfter: .seconds(2)),
        FailureClassification(
            category: .rateLimited, code: FailureCode("HTTP_429"), httpStatus: 429,
            retryAfter: .seconds(Int64.max / 4)),
        FailureClassification(
            category: .rateLimited, code: FailureCode("HTTP_429"), httpStatus: 429, retryAfter: .seconds(-5)),
    ]

    static func transient(requestWasNotSent: Bool) -> FailureClassification {
        FailureClassification(
            category: .networkUnreachable, code: FailureCode("NET_001"), requestWasNotSent: requestWasNotSent)
    }
}
