import ResilienceCore

/// The recorder's counts of finished attempts and failures (per key), retries and fetches over its recent
/// past, in 60 fixed time buckets spanning ``TelemetryRecorder/Configuration/rateWindow``: what the ratio
/// health rules read (through ``HealthInput/ratioCounts(over:endingBefore:)``).
///
/// Unlike the ring's records, the counts do not depend on how many events arrive: at any rate they reach back
/// the whole ``span`` (15 minutes by default), in ``resolution``-wide buckets (15 seconds by default). Get
/// them from ``TelemetryRecorder/recentCounts()``.
public struct RecentCounts: Sendable {
    /// Fields of each key's buckets.
    enum KeyField {
        static let attempts = 0
        static let failures = 1
        static let count = 2
    }

    /// Fields of the buckets over every key.
    enum GlobalField {
        static let retryAttempts = 0
        static let retrySuccesses = 1
        static let fetches = 2
        /// `fetch-completed` events with some but not all sources.
        static let partialCompletions = 3
        /// `partial-results` events.
        static let partialResults = 4
        static let count = 5
    }

    /// The width of one bucket: windows are counted in whole buckets.
    public let resolution: Duration
    /// How far back the counts reach (60 buckets).
    public let span: Duration
    let widthNanoseconds: Int64
    let keys: [(name: String, buckets: CountBuckets)]
    let global: CountBuckets

    init(widthNanoseconds: Int64, keys: [(name: String, buckets: CountBuckets)], global: CountBuckets) {
        self.widthNanoseconds = widthNanoseconds
        self.keys = keys
        self.global = global
        resolution = .nanoseconds(widthNanoseconds)
        span = .nanoseconds(widthNanoseconds) * (CountBuckets.slotCount - 1)
    }

    /// The bucket width in nanoseconds for a recorder whose counts span `window`, taken between one second and
    /// one hour.
    static func widthNanoseconds(spanning window: Duration) -> Int64 {
        let span = min(max(StoredRecord.nanoseconds(window), 1_000_000_000), 3_600_000_000_000)
        return span / Int64(CountBuckets.slotCount - 1)
    }

    /// The counts over the `window` ending at `end`, in whole buckets: the bucket holding `end` (as far as it
    /// has got) and the ones before it, as many as `window` takes (rounded up). Whatever reaches back beyond
    /// ``span`` is not counted.
    ///
    /// - Parameters:
    ///   - window: How long a window.
    ///   - end: When it ends.
    public func counts(over window: Duration, endingAt end: ResilienceInstant) -> RatioCounts {
        var counts = RatioCounts()
        let windowNanoseconds = StoredRecord.nanoseconds(window)
        guard windowNanoseconds > 0 else { return counts }
        let last = CountBuckets.index(StoredRecord.nanoseconds(end.offset), width: widthNanoseconds)
        let wanted = windowNanoseconds / widthNanoseconds + (windowNanoseconds % widthNanoseconds == 0 ? 0 : 1)
        let held = min(wanted, Int64(CountBuckets.slotCount))
        let (first, overflow) = last.subtractingReportingOverflow(held - 1)
        guard !overflow else { return counts }
        let range = first...last
        for (name, buckets) in keys {
            let attempts = Int(clamping: buckets.sum(KeyField.attempts, over: range))
            guard attempts > 0 else { continue }
            let failures = Int(clamping: buckets.sum(KeyField.failures, over: range))
            counts.attempts += attempts
            counts.failures += failures
            counts.attemptsByKey[name, default: 0] += attempts
            if failures > 0 { counts.failuresByKey[name, default: 0] += failures }
        }
        counts.retryAttempts = Int(clamping: global.sum(GlobalField.retryAttempts, over: range))
        counts.retrySuccesses = Int(clamping: global.sum(GlobalField.retrySuccesses, over: range))
        counts.fetches = Int(clamping: global.sum(GlobalField.fetches, over: range))
        counts.partialFetches = Int(
            clamping: max(
                global.sum(GlobalField.partialCompletions, over: range),
                global.sum(GlobalField.partialResults, over: range)))
        return counts
    }
}
