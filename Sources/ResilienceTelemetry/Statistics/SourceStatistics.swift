import ResilienceCore

/// What happened to one key (source id or host) inside a statistics window.
public struct SourceStatistics: Sendable, Hashable {
    /// Finished attempts (succeeded + failed).
    public var attempts = 0
    /// Succeeded attempts.
    public var successes = 0
    /// Failed attempts.
    public var failures = 0
    /// `source-failed` events (whole operations that failed after retries and fallbacks).
    public var sourceFailures = 0
    /// Scheduled retries.
    public var retries = 0
    /// Times the breaker opened.
    public var breakerOpens = 0
    /// Time the breaker spent open (or isolated) inside the window, up to the evaluation time.
    public var timeOpen: Duration = .zero
    /// The breaker's state after its latest transition in the window, if any: by
    /// ``BreakerTransition/sequence``, not by the order received (see ``TelemetryStatistics``).
    public var breakerState: BreakerState?
    /// Latency percentiles of finished attempts.
    public var latency: LatencySummary?
    /// The last successful attempt.
    public var lastSuccess: ResilienceInstant?
    /// The first failure after the last success, while the key is still failing.
    public var failingSince: ResilienceInstant?
    /// Failures per minute over the window.
    public var errorsPerMinute: Double = 0
    /// Failed attempts in each minute of the window, oldest first; the last entry is the minute ending at
    /// the evaluation time. At most 1,440 entries (a day).
    public var failuresByMinute: [Int] = []

    /// Creates empty statistics.
    public init() {}

    /// Failed attempts as a fraction of finished attempts; `nil` without attempts.
    public var errorRate: Double? {
        attempts == 0 ? nil : Double(failures) / Double(attempts)
    }

    /// True when the breaker is open or isolated.
    public var isBreakerOpen: Bool { breakerState == .open || breakerState == .isolated }
}
