/// Percentiles of one key's latencies, read from a ``LatencyHistogram`` (within its 12.5 % resolution).
public struct LatencySummary: Sendable, Hashable {
    /// How many latencies were recorded.
    public var count: Int
    /// The median.
    public var p50: Duration
    /// The 90th percentile.
    public var p90: Duration
    /// The 99th percentile.
    public var p99: Duration
    /// The largest latency.
    public var maximum: Duration
    /// The mean.
    public var mean: Duration

    /// Reads the summary from `histogram`; `nil` when it is empty.
    ///
    /// - Parameter histogram: The recorded latencies of one key.
    public init?(_ histogram: LatencyHistogram) {
        guard let p50 = histogram.value(atPercentile: 50), let p90 = histogram.value(atPercentile: 90),
            let p99 = histogram.value(atPercentile: 99), let mean = histogram.mean
        else { return nil }
        self.count = Int(clamping: histogram.totalCount)
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.maximum = .microseconds(Int64(clamping: histogram.maximumMicroseconds))
        self.mean = mean
    }
}
