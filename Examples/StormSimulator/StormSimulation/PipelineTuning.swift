import ResiliencePolicies

/// The settings of the default pipeline as the simulator configures the real types.
///
/// Everything not listed here is the type's documented default.
public struct PipelineTuning: Sendable {
    /// The jitter on the default pipeline's backoff.
    public var jitter: Jitter = .full
    /// The retry budget (library default: 10 % of requests + 1 retry/s over 10 s).
    public var budget: RetryBudgetConfiguration = .standard

    /// The library defaults.
    public init() {}

    /// The settings the published report uses.
    public static var standard: PipelineTuning { PipelineTuning() }
}
