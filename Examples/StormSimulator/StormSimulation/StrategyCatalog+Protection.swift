import ResilienceCore
import ResiliencePolicies

extension StrategyCatalog {
    /// The breaker and throttle rows and the default pipeline (filled in once the breakers exist).
    static func protectiveStrategies(
        _ jittered: StandardRetryPolicy, schedule: RetrySchedule, tuning: PipelineTuning,
        makeBudget: @escaping @Sendable (UInt64) -> any RetryBudgeting
    ) -> [ClientStrategy] {
        [
            ClientStrategy(
                name: StrategyName.defaultPipeline, retryPolicy: jittered, maxAttempts: schedule.maxAttempts,
                makeRetryBudget: makeBudget)
        ]
    }
}
