import ResilienceCore

/// What the simulator needs from a retry budget: told about each logical request, asked before each retry.
///
/// Core has no retry-budget protocol (a budget is a concrete ResiliencePolicies type), so the simulator
/// talks to it through this small adapter protocol; the conformance of the real type only forwards calls.
public protocol RetryBudgeting: AnyObject, Sendable {
    /// A logical request (its first attempt) started at `now`.
    func noteRequest(at now: ResilienceInstant)
    /// Asks to spend one retry at `now`; `false` when the budget is exhausted.
    func spendRetry(at now: ResilienceInstant) -> Bool
}
