import ResilienceCore

/// The naive baseline many apps ship: retry at once, a fixed number of times, on any transient failure.
///
/// It is here as the "what not to do" row of the comparison, not as a ResilienceKit policy.
public struct ImmediateRetry: RetryPolicy {
    /// Attempts in total, the first included (4 = "retry ×3").
    public var maxAttempts: Int

    /// Creates the baseline with `maxAttempts` attempts in total.
    public init(maxAttempts: Int) {
        self.maxAttempts = maxAttempts
    }

    /// Retries at once while attempts remain and the failure is transient.
    public func decide<Random: RandomNumberGenerator>(
        _ attempt: RetryAttempt, using random: inout Random
    ) -> RetryDecision {
        guard attempt.failure.isTransient else { return .stop(.notRetryable) }
        guard attempt.number < maxAttempts else { return .stop(.attemptsExhausted) }
        return .retry(after: .zero)
    }

    /// `immediate ×n`.
    public var policyDescription: String { "immediate retry, \(maxAttempts) attempts" }
}
