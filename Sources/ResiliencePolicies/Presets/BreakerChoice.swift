/// Which circuit breaker a ``PipelinePreset`` builds: a recipe, so every pipeline gets its own breaker.
///
/// ```swift
/// preset.breaker = .rateLimit(.standard)
/// preset.breaker = .custom("mine") { _ in MyBreaker() }
/// ```
public struct BreakerChoice: Sendable, CustomStringConvertible {
    /// A short name for descriptions.
    public let description: String
    private let build: @Sendable (SharedRandomSource) -> any BreakerPolicy

    /// A breaker built by `make`, which receives the pipeline's random source.
    public static func custom(
        _ name: String, _ make: @escaping @Sendable (SharedRandomSource) -> any BreakerPolicy
    ) -> BreakerChoice {
        BreakerChoice(description: name, build: make)
    }

    /// A ``ConsecutiveFailureBreaker``.
    public static func consecutiveFailures(_ configuration: ConsecutiveFailureBreaker.Configuration) -> BreakerChoice {
        custom("consecutive-failures") { ConsecutiveFailureBreaker(configuration, random: $0) }
    }

    /// A ``FailureRatioBreaker``.
    public static func failureRatio(_ configuration: FailureRatioBreaker.Configuration) -> BreakerChoice {
        custom("failure-ratio") { FailureRatioBreaker(configuration, random: $0) }
    }

    /// A ``RateLimitBreaker``: opens on repeated 429s with a growing cooldown (30, 60, 120, 240, 300 s).
    public static func rateLimit(_ configuration: RateLimitBreaker.Configuration) -> BreakerChoice {
        custom("rate-limit") { RateLimitBreaker(configuration, random: $0) }
    }

    /// Builds a new breaker.
    public func makeBreaker(random: SharedRandomSource) -> any BreakerPolicy {
        build(random)
    }
}
