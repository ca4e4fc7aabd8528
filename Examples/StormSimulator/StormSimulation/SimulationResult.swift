/// What one strategy did in one scenario: counts, a time series, and the latencies of successes.
public struct SimulationResult: Hashable, Sendable {
    /// The scenario's identifier.
    public var scenario: String
    /// The strategy's name.
    public var strategy: String
    /// Logical requests started.
    public var logicalRequests = 0
    /// Attempts sent to the server (first attempts, retries and hedges).
    public var attempts = 0
    /// Logical requests that succeeded.
    public var successes = 0
    /// Logical requests that failed.
    public var failures = 0
    /// Logical requests still open when the simulation stopped.
    public var unfinished = 0
    /// Attempts a circuit breaker refused locally.
    public var rejectedByBreaker = 0
    /// Attempts a rate limiter or adaptive throttle refused locally.
    public var rejectedByLimiter = 0
    /// Retries the policy wanted but the retry budget refused.
    public var deniedByBudget = 0
    /// Hedged attempts launched.
    public var hedges = 0
    /// Requests the server finished after their client had stopped waiting.
    public var wastedWork = 0
    /// When the last logical request finished, from the origin.
    public var completionTime: Duration = .zero
    /// The width of one bucket of the time series.
    public var bucket: Duration
    /// Logical requests started, per bucket.
    public var startedPerBucket: [Int]
    /// Attempts sent, per bucket (the server's offered load).
    public var attemptsPerBucket: [Int]
    /// Logical requests that succeeded, per bucket in which they finished (goodput).
    public var successesPerBucket: [Int]
    /// Logical requests that eventually succeeded, per bucket in which they started.
    public var successfulStartsPerBucket: [Int]
    /// Attempts refused locally (breaker, limiter) or retries refused by the budget, per bucket.
    public var localRejectionsPerBucket: [Int]
    /// Attempts that timed out at the client, per bucket.
    public var timeoutsPerBucket: [Int]
    /// Latencies of successful logical requests in nanoseconds, sorted.
    var latencies: [Int64] = []

    /// An empty result with `bucketCount` buckets.
    init(scenario: String, strategy: String, bucket: Duration, bucketCount: Int) {
        self.scenario = scenario
        self.strategy = strategy
        self.bucket = bucket
        startedPerBucket = Array(repeating: 0, count: bucketCount)
        attemptsPerBucket = Array(repeating: 0, count: bucketCount)
        successesPerBucket = Array(repeating: 0, count: bucketCount)
        successfulStartsPerBucket = Array(repeating: 0, count: bucketCount)
        localRejectionsPerBucket = Array(repeating: 0, count: bucketCount)
        timeoutsPerBucket = Array(repeating: 0, count: bucketCount)
    }

    /// Attempts per logical request over the whole run.
    public var amplification: Double {
        logicalRequests == 0 ? 0 : Double(attempts) / Double(logicalRequests)
    }

    /// Successful logical requests ÷ logical requests.
    public var successRate: Double {
        logicalRequests == 0 ? 0 : Double(successes) / Double(logicalRequests)
    }

    /// Attempts sent ÷ logical requests started, both counted in `[start, end)`.
    public func amplification(from start: Duration, to end: Duration) -> Double {
        let range = bucketRange(from: start, to: end)
        let started = range.reduce(0) { $0 + startedPerBucket[$1] }
        let sent = range.reduce(0) { $0 + attemptsPerBucket[$1] }
        return started == 0 ? 0 : Double(sent) / Double(started)
    }

    /// The highest number of attempts per second in any bucket.
    public var peakLoad: Double {
        Double(attemptsPerBucket.max() ?? 0) / bucket.seconds
    }

    /// The latency at `quantile` (0…1) of successful requests, nearest-rank; `nil` without successes.
    public func latency(at quantile: Double) -> Duration? {
        guard !latencies.isEmpty else { return nil }
        let rank = Int((quantile * Double(latencies.count)).rounded(.up))
        let index = min(max(rank, 1), latencies.count) - 1
        return .nanoseconds(latencies[index])
    }

    /// The time after `faultEnd` from which every bucket up to `loadEnd` has at least `threshold` of its
    /// requests succeeding; zero when already healthy, `nil` when it never recovers before `loadEnd`.
    public func recoveryTime(after faultEnd: Duration, loadEnd: Duration, threshold: Double = 0.95) -> Duration? {
        let range = bucketRange(from: faultEnd, to: loadEnd)
        guard !range.isEmpty else { return nil }
        var firstHealthy: Int? = nil
        for index in range.reversed() {
            let started = startedPerBucket[index]
            let healthy = started == 0 || Double(successfulStartsPerBucket[index]) >= threshold * Double(started)
            if !healthy { break }
            firstHealthy = index
        }
        guard let firstHealthy else { return nil }
        let recoveredAt = bucket * firstHealthy
        return recoveredAt > faultEnd ? recoveredAt - faultEnd : .zero
    }

    /// The bucket indices covering `[start, end)`.
    func bucketRange(from start: Duration, to end: Duration) -> Range<Int> {
        let width = bucket.nanoseconds
        let lower = Int((start.nanoseconds + width - 1) / width)
        let upper = Int(end.nanoseconds / width)
        let clampedLower = min(max(lower, 0), startedPerBucket.count)
        return clampedLower..<max(clampedLower, min(upper, startedPerBucket.count))
    }
}
