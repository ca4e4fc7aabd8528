/// A conformance kit a third party runs against its own ``RetryPolicy``, from any test framework.
///
/// It checks the protocol's contract: never retries cancellation, circuit-open or non-transient failures;
/// honours the idempotency guard; delays are non-negative and capped even at attempt 10,000 and with huge
/// server hints; the same seed gives the same decisions. ``run()`` reports one case per rule; ``check()``
/// throws one ``ConformanceFailure``.
///
/// ```swift
/// @Test func conforms() async throws {
///     try await RetryPolicyConformance(MyPolicy()).check()
/// }
/// ```
public struct RetryPolicyConformance: ConformanceKit {
    typealias Violation = ConformanceViolation

    /// The policy under test.
    public var policy: any RetryPolicy
    /// The largest delay considered capped (default one hour).
    public var maximumDelay: Duration
    /// The seed for the generators.
    public var seed: UInt64

    /// Creates the kit for `policy`.
    ///
    /// - Parameters:
    ///   - policy: The policy under test.
    ///   - maximumDelay: The largest delay considered capped.
    ///   - seed: The seed for the random generators.
    public init(_ policy: any RetryPolicy, maximumDelay: Duration = .seconds(3600), seed: UInt64 = 0x5EED) {
        self.policy = policy
        self.maximumDelay = maximumDelay
        self.seed = seed
    }

    /// `"RetryPolicy"`.
    public var subject: String { "RetryPolicy" }

    /// The cases, one per rule.
    static let caseNames = [
        "never-retries-cancelled-circuit-open-or-permanent", "idempotency-guard", "capped-non-negative-delay",
        "deterministic",
    ]

    /// Runs every rule and reports one case per rule.
    public func run() async -> ConformanceReport {
        let found = violations()
        var names = Self.caseNames
        for violation in found where !names.contains(Self.caseName(of: violation)) {
            names.append(Self.caseName(of: violation))
        }
        return ConformanceReport(
            subject: subject,
            cases: names.map { name in
                ConformanceReport.CaseResult(name: name, violations: found.filter { Self.caseName(of: $0) == name })
            })
    }

    /// The case a violation belongs to (every must-stop category shares one case).
    static func caseName(of violation: Violation) -> String {
        violation.rule.hasPrefix("never-retries-")
            ? "never-retries-cancelled-circuit-open-or-permanent" : violation.rule
    }

    /// Every broken rule; empty when the policy conforms.
    func violations() -> [Violation] {
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
