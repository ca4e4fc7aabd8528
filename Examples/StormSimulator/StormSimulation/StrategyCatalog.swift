import ResilienceCore

/// The strategies every scenario compares, built for a scenario's backoff schedule.
public enum StrategyCatalog {
    /// The two naive baselines (no retry, immediate retry ×3).
    public static func baselines(_ schedule: RetrySchedule) -> [ClientStrategy] {
        [
            ClientStrategy(name: StrategyName.noRetry, retryPolicy: nil, maxAttempts: 1),
            ClientStrategy(name: StrategyName.immediate, retryPolicy: ImmediateRetry(maxAttempts: 4), maxAttempts: 4),
        ]
    }
}
