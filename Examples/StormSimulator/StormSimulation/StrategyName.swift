/// The names of the strategies every report compares (used to find rows for the goals).
public enum StrategyName {
    /// Never retries.
    public static let noRetry = "no retry"
    /// Retries at once, three times.
    public static let immediate = "immediate x3"
    /// Exponential backoff without jitter.
    public static let exponential = "exponential, no jitter"
    /// Exponential backoff with full jitter.
    public static let fullJitter = "full jitter"
    /// Exponential backoff with equal jitter.
    public static let equalJitter = "equal jitter"
    /// Decorrelated jitter.
    public static let decorrelatedJitter = "decorrelated jitter"
    /// Seed 000's recommended policy (network preset: 1 s doubling, cap 10 s, ±20 %).
    public static let seed000 = "seed 000 policy"
    /// Seed 002's policy (1 s doubling, + 0–500 ms, 3 attempts).
    public static let seed002 = "seed 002 policy"
    /// Full jitter plus a retry budget.
    public static let withBudget = "jitter + budget"
    /// Full jitter plus a circuit breaker.
    public static let withBreaker = "jitter + breaker"
    /// Full jitter plus adaptive throttling.
    public static let withThrottle = "jitter + throttle"
    /// ResilienceKit's default pipeline: jittered backoff + budget + breaker + adaptive throttling.
    public static let defaultPipeline = "ResilienceKit default"
    /// The default pipeline with the library's untuned time constants (breaker open 60 s, throttle window 120 s).
    public static let defaultLibrarySettings = "default, library timings"
}
