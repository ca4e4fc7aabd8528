import ResilienceCore

/// Statistics over a window of recorded events: error rates per source, retry success,
/// category and code distribution, breaker behaviour and latency percentiles.
///
/// Computed from a snapshot, never on the hot path. Definitions:
/// - *error rate*: failed attempts ÷ finished attempts; *errors per minute*: failed attempts ÷ window minutes;
/// - *retry success rate*: of finished retry attempts (attempt number ≥ 2), the fraction that succeeded;
/// - *partial failure rate*: fetches that ended with some but not all sources (`fetch-completed` with
///   `count < total`, or `partial-results` when larger) ÷ fetches (`fetch-completed`).
public struct TelemetryStatistics: Sendable, Hashable {
    /// A failure code and how often it occurred.
    public struct CodeCount: Sendable, Hashable {
        /// The code.
        public var code: FailureCode
        /// How often.
        public var count: Int
        /// Creates a pair.
        ///
        /// - Parameters:
        ///   - code: The failure code counted.
        ///   - count: How many events in the window carried it.
        public init(code: FailureCode, count: Int) {
            self.code = code
            self.count = count
        }
    }

    /// When the statistics were computed.
    public var now: ResilienceInstant
    /// The window they cover, ending at ``now``.
    public var window: Duration
    /// Per key.
    public var sources: [String: SourceStatistics] = [:]
    /// Finished retry attempts (attempt ≥ 2).
    public var retryAttempts = 0
    /// Retry attempts that succeeded.
    public var retrySuccesses = 0
    /// Failures by category.
    public var categoryDistribution: [FailureCategory: Int] = [:]
    /// Failures by code.
    public var errorCountsByCode: [FailureCode: Int] = [:]
    /// Fetches over all sources (`fetch-completed` events).
    public var fetches = 0
    /// Fetches with partial results.
    public var partialFetches = 0
    /// Blocked plaintext requests.
    public var insecureTransportBlocks = 0

    /// Computes the statistics of `events` inside `window` ending at `now`.
    ///
    /// - Parameters:
    ///   - events: The events to summarise; those outside the window are ignored.
    ///   - now: When the statistics were computed.
    ///   - window: The window they cover, ending at ``now``.
    public init(events: [ResilienceEvent], now: ResilienceInstant, window: Duration) {
        self.now = now
        self.window = window
        let start = now.advanced(by: .zero - window)
        var histograms: [String: LatencyHistogram] = [:]
        var openSince: [String: ResilienceInstant] = [:]
        var partialEvents = 0
        var partialCompletions = 0
        let minuteCount = Self.minuteCount(window)
        for event in events where event.time >= start && event.time <= now {
            var source = sources[event.key] ?? SourceStatistics()
            switch event.kind {
            case .attemptSucceeded, .attemptFailed:
                let succeeded = event.kind == .attemptSucceeded
                source.attempts += 1
                if succeeded {
                    source.successes += 1
                    source.lastSuccess = event.time
                    source.failingSince = nil
                } else {
                    source.failures += 1
                    if source.failingSince == nil { source.failingSince = event.time }
                    countFailure(event.classification)
                    if source.failuresByMinute.isEmpty {
                        source.failuresByMinute = Array(repeating: 0, count: minuteCount)
                    }
                    let minutesAgo = Int(event.time.duration(to: now).components.seconds / 60)
                    if minutesAgo < minuteCount { source.failuresByMinute[minuteCount - 1 - minutesAgo] += 1 }
                }
                if event.attempt >= 2 {
                    retryAttempts += 1
                    if succeeded { retrySuccesses += 1 }
                }
                if let duration = event.duration { histograms[event.key, default: LatencyHistogram()].record(duration) }
            case .sourceFailed:
                source.sourceFailures += 1
                if source.failingSince == nil { source.failingSince = event.time }
            case .retryScheduled:
                source.retries += 1
            case .breakerTransition:
                guard let transition = event.transition else { break }
                let wasOpen = transition.from == .open || transition.from == .isolated
                let isOpen = transition.to == .open || transition.to == .isolated
                if wasOpen && !isOpen {
                    source.timeOpen += (openSince[event.key] ?? start).duration(to: event.time)
                    openSince[event.key] = nil
                } else if isOpen && !wasOpen {
                    openSince[event.key] = event.time
                }
                if transition.to == .open && transition.from != .open { source.breakerOpens += 1 }
                source.breakerState = transition.to
            case .insecureTransportBlocked:
                insecureTransportBlocks += 1
            case .fetchCompleted:
                fetches += 1
                if let count = event.count, let total = event.total, count < total, count > 0 {
                    partialCompletions += 1
                }
            case .partialResults:
                partialEvents += 1
            default:
                break
            }
            sources[event.key] = source
        }
        for (key, since) in openSince { sources[key]?.timeOpen += since.duration(to: now) }
        for (key, histogram) in histograms { sources[key]?.latency = LatencySummary(histogram) }
        let minutes = max(Double(window.components.seconds) / 60, 1.0 / 60)
        for key in Array(sources.keys) {
            let failures = sources[key]?.failures ?? 0
            sources[key]?.errorsPerMinute = Double(failures) / minutes
        }
        partialFetches = max(partialEvents, partialCompletions)
    }

    private static func minuteCount(_ window: Duration) -> Int {
        // At most a day of minutes: a window near `.seconds(Int64.max)` must not overflow rounding up.
        let seconds = min(max(window.components.seconds, 1), 1440 * 60)
        return Int((seconds + 59) / 60)
    }

    private mutating func countFailure(_ classification: FailureClassification?) {
        guard let classification, classification.category != .cancelled else { return }
        categoryDistribution[classification.category, default: 0] += 1
        errorCountsByCode[classification.code, default: 0] += 1
    }

    /// Of finished retry attempts, the fraction that succeeded; `nil` without retries.
    public var retrySuccessRate: Double? {
        retryAttempts == 0 ? nil : Double(retrySuccesses) / Double(retryAttempts)
    }

    /// Failed attempts ÷ finished attempts over every key; `nil` without attempts.
    public var errorRate: Double? {
        let attempts = sources.values.reduce(0) { $0 + $1.attempts }
        let failures = sources.values.reduce(0) { $0 + $1.failures }
        return attempts == 0 ? nil : Double(failures) / Double(attempts)
    }

    /// Partial fetches ÷ fetches; `nil` without fetches.
    public var partialFailureRate: Double? {
        fetches == 0 ? nil : Double(min(partialFetches, fetches)) / Double(fetches)
    }

    /// The most frequent failure code (ties broken alphabetically), if any failed.
    public var mostFrequentError: CodeCount? {
        errorCountsByCode.max { lhs, rhs in
            lhs.value != rhs.value ? lhs.value < rhs.value : lhs.key.rawValue > rhs.key.rawValue
        }.map { CodeCount(code: $0.key, count: $0.value) }
    }
}
