import ResiliencePolicies

/// The settings of the default pipeline as the simulator configures the real types.
///
/// Everything not listed here is the type's documented default; ``standard`` says which defaults the
/// published report changes and why.
public struct PipelineTuning: Sendable {
    /// The jitter on the default pipeline's backoff.
    public var jitter: Jitter = .full
    /// The retry budget (library default: 10 % of requests + 1 retry/s over 10 s).
    public var budget: RetryBudgetConfiguration = .standard
    /// The circuit breaker (library default: 5 failures in a row, open 60 s ±30 %).
    public var breaker: ConsecutiveFailureBreaker.Configuration = .standard
    /// Adaptive throttling (library default: K = 2 over 120 s).
    public var throttle: AdaptiveThrottle.Configuration = .standard

    /// The library defaults.
    public init() {}

    /// The library's defaults, unchanged.
    public static var libraryDefaults: PipelineTuning { PipelineTuning() }

    /// The settings the published report uses: the library defaults, except two time constants scaled to a
    /// service called with a 1 s timeout and a 5 s backoff cap (the library's are sized for a mobile app
    /// calling a job board):
    /// - the breaker opens for 2 s ±30 %, doubling on repeated trips up to 5 s (default 60 s up to 10 min);
    /// - adaptive throttling counts the last 5 s (default 120 s).
    ///
    /// The report also runs the pipeline with ``libraryDefaults`` so the effect of these changes is visible.
    public static var standard: PipelineTuning {
        var tuning = PipelineTuning()
        tuning.breaker.openDuration = BreakerBackoff(
            base: .seconds(2), growthFactor: 2, maximumMultiplier: 2.5, maximum: .seconds(5), jitter: 0.3)
        tuning.throttle.window = .seconds(5)
        tuning.throttle.buckets = 10
        return tuning
    }
}
