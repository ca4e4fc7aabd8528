/// A retry policy with one rule per failure category (network, timeout, rate limit, server error).
///
/// Before the table it applies the module's guard (never cancellation, circuit-open, non-transient; the
/// idempotency guard) and the HTTP status rule: 408 and 504 use the timeout rule (linear), 429 the
/// rate-limit rule, other 5xx their category's rule or the server-error rule, and 501 and every other 4xx
/// are never retried, whatever the classifier's category. The ``standard`` table maps timeouts (408, 504) to a linear curve and rate limits (429) and
/// server errors (5xx) to exponential ones, with Appendix B's numbers.
public struct CategoryRetryPolicy: RetryPolicy, Hashable {
    /// The rule for each category; a category without a rule is not retried.
    public var rules: [FailureCategory: CategoryRetryRule]
    /// How the server's retry hint is treated.
    public var retryAfter: RetryAfterRule
    /// Whether the HTTP status rule applies (no retry for 501 or 4xx other than 408 and 429).
    public var appliesStatusRule: Bool

    /// Creates a policy from a table.
    ///
    /// - Parameters:
    ///   - rules: The rule for each category; a category without a rule is not retried.
    ///   - retryAfter: How the server's retry hint is treated. Default: `.standard`.
    ///   - appliesStatusRule: Whether the HTTP status rule applies (no retry for 501 or 4xx other than 408 and 429).
    ///     Default: `true`.
    public init(
        rules: [FailureCategory: CategoryRetryRule],
        retryAfter: RetryAfterRule = .standard,
        appliesStatusRule: Bool = true
    ) {
        self.rules = rules
        self.retryAfter = retryAfter
        self.appliesStatusRule = appliesStatusRule
    }

    /// Network (transient, unreachable) 3/1 s/10 s/0.2; timeouts linear 3/1 s/10 s/0.2;
    /// rate limits 2/5 s/60 s/0.3; server errors 3/2 s/30 s/0.2.
    public static let standard = CategoryRetryPolicy(rules: [
        .transient: .network,
        .networkUnreachable: .network,
        .timeout: .timeout,
        .rateLimited: .rateLimit,
        .serverError: .serverError,
    ])

    /// The rule that applies to `failure`, or `nil` when it is not retried.
    public func rule(for failure: FailureClassification) -> CategoryRetryRule? {
        guard appliesStatusRule, let status = failure.httpStatus else { return rules[failure.category] }
        switch status {
        case 501: return nil
        case 408, 504: return rules[.timeout] ?? rules[failure.category]
        case 429: return rules[.rateLimited] ?? rules[failure.category]
        case 400..<500: return nil
        case 500..<600: return rules[failure.category] ?? rules[.serverError]
        default: return rules[failure.category]
        }
    }

    /// Retry, or stop, after `attempt` failed.
    public func decide<Random: RandomNumberGenerator>(
        _ attempt: RetryAttempt, using random: inout Random
    )
        -> RetryDecision
    {
        if let reason = RetryGuard.stopReason(for: attempt) { return .stop(reason) }
        guard let rule = rule(for: attempt.failure) else { return .stop(.notRetryable) }
        if attempt.number >= rule.maxAttempts { return .stop(.attemptsExhausted) }
        if let hinted = retryAfter.decision(for: attempt.failure) { return hinted }
        let delay = rule.backoff.delay(forRetry: attempt.number, previous: attempt.previousDelay, using: &random)
        return .retry(after: rule.jitter.apply(to: delay, using: &random), unjitteredDelay: delay)
    }

    /// `per-category(rate-limited: 2 × …, …)` with categories sorted by name.
    public var policyDescription: String {
        let rows = rules.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key): \($0.value)" }
        return "per-category(" + rows.joined(separator: "; ") + ")"
    }
}

extension RetryPolicy where Self == CategoryRetryPolicy {
    /// The standard per-category table (``CategoryRetryPolicy/standard``).
    public static var perCategory: CategoryRetryPolicy { .standard }
}

extension RetryPolicy where Self == StandardRetryPolicy {
    /// 3 attempts, exponential 1 s ×2 capped at 30 s, full jitter (``StandardRetryPolicy/standard``).
    public static var standard: StandardRetryPolicy { StandardRetryPolicy.standard }
    /// The API client policy (``StandardRetryPolicy/apiClient``).
    public static var apiClient: StandardRetryPolicy { StandardRetryPolicy.apiClient }
}
