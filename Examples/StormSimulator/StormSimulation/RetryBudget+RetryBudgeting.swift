import ResilienceCore
import ResiliencePolicies

/// The real ``ResiliencePolicies/RetryBudget`` seen through the simulator's adapter protocol.
extension RetryBudget: RetryBudgeting {
    /// Forwards to `recordRequest(now:)`.
    public func noteRequest(at now: ResilienceInstant) {
        recordRequest(now: now)
    }

    /// Forwards to `tryWithdraw(now:)`.
    public func spendRetry(at now: ResilienceInstant) -> Bool {
        tryWithdraw(now: now)
    }
}
