import ResilienceCore
import ResiliencePolicies

/// The strategies every scenario compares, built from the real ResiliencePolicies types for a schedule.
///
/// Only the two naive baselines (no retry, ``ImmediateRetry``) are the simulator's own; every other row is a
/// ResiliencePolicies type, configured here. ``PipelineTuning`` holds the settings of the default pipeline.
public enum StrategyCatalog {
    /// The two naive baselines (no retry, immediate retry ×3).
    public static func baselines(_ schedule: RetrySchedule) -> [ClientStrategy] {
        [
            ClientStrategy(name: StrategyName.noRetry, retryPolicy: nil, maxAttempts: 1),
            ClientStrategy(name: StrategyName.immediate, retryPolicy: ImmediateRetry(maxAttempts: 4), maxAttempts: 4),
        ]
    }

    /// Every strategy of the comparison, with the default tuning.
    public static func all(_ schedule: RetrySchedule) -> [ClientStrategy] {
        all(schedule, tuning: .standard)
    }

    /// Every strategy of the comparison.
    public static func all(_ schedule: RetrySchedule, tuning: PipelineTuning) -> [ClientStrategy] {
        let clock = ResilienceClock(FrozenClock())
        func backoff(_ jitter: Jitter) -> StandardRetryPolicy {
            StandardRetryPolicy(
                maxAttempts: schedule.maxAttempts,
                backoff: .exponential(base: schedule.base, multiplier: 2, cap: schedule.cap), jitter: jitter)
        }
        let decorrelated = StandardRetryPolicy(
            maxAttempts: schedule.maxAttempts, backoff: .decorrelated(base: schedule.base, cap: schedule.cap),
            jitter: .none)
        let jittered = backoff(tuning.jitter)
        let budgetConfiguration = tuning.budget
        let makeBudget: @Sendable (UInt64) -> any RetryBudgeting = { _ in
            RetryBudget(budgetConfiguration, clock: clock)
        }
        var strategies = baselines(schedule)
        strategies += [
            ClientStrategy(
                name: StrategyName.exponential, retryPolicy: backoff(.none), maxAttempts: schedule.maxAttempts),
            ClientStrategy(
                name: StrategyName.fullJitter, retryPolicy: backoff(.full), maxAttempts: schedule.maxAttempts),
            ClientStrategy(
                name: StrategyName.equalJitter, retryPolicy: backoff(.equal), maxAttempts: schedule.maxAttempts),
            ClientStrategy(
                name: StrategyName.decorrelatedJitter, retryPolicy: decorrelated, maxAttempts: schedule.maxAttempts),
            ClientStrategy(
                name: StrategyName.seed000, retryPolicy: CategoryRetryPolicy.standard,
                maxAttempts: CategoryRetryRule.serverError.maxAttempts),
            ClientStrategy(
                name: StrategyName.seed002, retryPolicy: StandardRetryPolicy.apiClient,
                maxAttempts: StandardRetryPolicy.apiClient.maxAttempts),
            ClientStrategy(
                name: StrategyName.withBudget, retryPolicy: jittered, maxAttempts: schedule.maxAttempts,
                makeRetryBudget: makeBudget),
        ]
        strategies += protectiveStrategies(jittered, schedule: schedule, tuning: tuning, makeBudget: makeBudget)
        return strategies
    }
}
