/// Which circuit breaker a ``PipelinePreset`` builds: a recipe, so every pipeline gets its own breaker.
///
/// ```swift
/// preset.breaker = .rateLimit(.standard)
/// preset.breaker = .custom("mine") { _ in MyBreaker() }
/// ```
public typealias BreakerChoice = PresetChoice<any BreakerPolicy>

extension PresetChoice where Component == any BreakerPolicy {
    /// A ``ConsecutiveFailureBreaker``.
    ///
    /// - Parameter configuration: Threshold, half-open rules and the growing open time.
    public static func consecutiveFailures(_ configuration: ConsecutiveFailureBreaker.Configuration) -> BreakerChoice {
        custom("consecutive-failures") { ConsecutiveFailureBreaker(configuration, random: $0) }
    }

    /// A ``FailureRatioBreaker``.
    ///
    /// - Parameter configuration: The window, the failure ratio and minimum throughput that open it, slow-call rules,
    ///   half-open rules and the open time.
    public static func failureRatio(_ configuration: FailureRatioBreaker.Configuration) -> BreakerChoice {
        custom("failure-ratio") { FailureRatioBreaker(configuration, random: $0) }
    }

    /// A ``RateLimitBreaker``: opens on repeated 429s with a growing cooldown (30, 60, 120, 240, 300 s).
    ///
    /// - Parameter configuration: The 429 threshold and the growing cooldown.
    public static func rateLimit(_ configuration: RateLimitBreaker.Configuration) -> BreakerChoice {
        custom("rate-limit") { RateLimitBreaker(configuration, random: $0) }
    }

    /// Builds a new breaker.
    public func makeBreaker(random: SharedRandomSource) -> any BreakerPolicy {
        make(random: random)
    }
}
