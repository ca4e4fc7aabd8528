import ResilienceCore
import ResiliencePolicies

extension StrategyCatalog {
    /// The breaker and throttle rows and the default pipeline, all with the jittered backoff, then the default
    /// pipeline once more with the library's untuned time constants.
    static func protectiveStrategies(
        _ jittered: StandardRetryPolicy, schedule: RetrySchedule, tuning: PipelineTuning,
        makeBudget: @escaping @Sendable (UInt64) -> any RetryBudgeting
    ) -> [ClientStrategy] {
        let tuned = protection(tuning)
        let untuned = protection(.libraryDefaults)
        let attempts = schedule.maxAttempts
        return [
            ClientStrategy(
                name: StrategyName.withBreaker, retryPolicy: jittered, maxAttempts: attempts,
                makeBreaker: tuned.breaker),
            ClientStrategy(
                name: StrategyName.withThrottle, retryPolicy: jittered, maxAttempts: attempts,
                makeLimiter: tuned.throttle),
            ClientStrategy(
                name: StrategyName.defaultPipeline, retryPolicy: jittered, maxAttempts: attempts,
                makeRetryBudget: makeBudget, makeBreaker: tuned.breaker, makeLimiter: tuned.throttle),
            ClientStrategy(
                name: StrategyName.defaultLibrarySettings, retryPolicy: jittered, maxAttempts: attempts,
                makeRetryBudget: makeBudget, makeBreaker: untuned.breaker, makeLimiter: untuned.throttle),
        ]
    }

    private static func protection(
        _ tuning: PipelineTuning
    ) -> (breaker: @Sendable (UInt64) -> any BreakerPolicy, throttle: @Sendable (UInt64) -> any RateLimiter) {
        let breakerConfiguration = tuning.breaker
        let throttleConfiguration = tuning.throttle
        return (
            { seed in ConsecutiveFailureBreaker(breakerConfiguration, random: SharedRandomSource(seed: seed)) },
            { seed in AdaptiveThrottle(throttleConfiguration, random: SharedRandomSource(seed: seed)) }
        )
    }
}
