import ResilienceCore

/// Finished attempts, failures, retries and fetches over one window: what the ratio health rules compare
/// (``HealthRule/errorRate(above:for:severity:minimumAttempts:)``,
/// ``HealthRule/retrySuccessRate(below:over:minimumRetries:)`` and
/// ``HealthRule/partialFailureRate(above:over:minimumFetches:)``).
///
/// Comes from ``HealthInput/ratioCounts(over:endingBefore:)``: the recorder's ``RecentCounts`` when the input
/// has them, else the input's events. Definitions as in ``TelemetryStatistics``.
public struct RatioCounts: Sendable, Hashable {
    /// Finished attempts (succeeded + failed) over every key.
    public var attempts = 0
    /// Failed attempts over every key.
    public var failures = 0
    /// Finished attempts per key (keys with at least one).
    public var attemptsByKey: [String: Int] = [:]
    /// Failed attempts per key (keys with at least one).
    public var failuresByKey: [String: Int] = [:]
    /// Finished retry attempts (attempt number ≥ 2).
    public var retryAttempts = 0
    /// Retry attempts that succeeded.
    public var retrySuccesses = 0
    /// Fetches (`fetch-completed` events).
    public var fetches = 0
    /// Fetches with partial results.
    public var partialFetches = 0

    /// Creates empty counts.
    public init() {}

    /// The counts of `statistics`.
    ///
    /// - Parameter statistics: Statistics over the window.
    public init(_ statistics: TelemetryStatistics) {
        for (key, source) in statistics.sources where source.attempts > 0 {
            attempts += source.attempts
            failures += source.failures
            attemptsByKey[key] = source.attempts
            if source.failures > 0 { failuresByKey[key] = source.failures }
        }
        retryAttempts = statistics.retryAttempts
        retrySuccesses = statistics.retrySuccesses
        fetches = statistics.fetches
        partialFetches = statistics.partialFetches
    }

    /// Failed attempts ÷ finished attempts; `nil` without attempts.
    public var errorRate: Double? {
        attempts == 0 ? nil : Double(failures) / Double(attempts)
    }

    /// Failed attempts ÷ finished attempts of `key`; `nil` when it has none.
    ///
    /// - Parameter key: The key (source id or host).
    public func errorRate(of key: String) -> Double? {
        guard let attempts = attemptsByKey[key], attempts > 0 else { return nil }
        return Double(failuresByKey[key, default: 0]) / Double(attempts)
    }

    /// Of finished retry attempts, the fraction that succeeded; `nil` without retries.
    public var retrySuccessRate: Double? {
        retryAttempts == 0 ? nil : Double(retrySuccesses) / Double(retryAttempts)
    }

    /// Partial fetches ÷ fetches; `nil` without fetches.
    public var partialFailureRate: Double? {
        fetches == 0 ? nil : Double(min(partialFetches, fetches)) / Double(fetches)
    }
}
