/// Latency percentiles of one strategy in the tail-latency scenario, with and without hedging.
public struct TailRow: Hashable, Sendable {
    /// The strategy's name.
    public var strategy: String
    /// The hedging delay, `nil` without hedging.
    public var hedgeDelay: Duration?
    /// Median latency.
    public var p50: Duration?
    /// 95th percentile.
    public var p95: Duration?
    /// 99th percentile.
    public var p99: Duration?
    /// 99.9th percentile.
    public var p999: Duration?
    /// Attempts per logical request.
    public var load: Double
    /// Success rate.
    public var successRate: Double
    /// Latency at each of ``chartQuantiles``, for the chart.
    public var quantileLatencies: [Duration?]

    /// The quantiles drawn on the tail-latency chart (p50 to p99.95).
    public static let chartQuantiles = [0.5, 0.8, 0.9, 0.95, 0.97, 0.99, 0.995, 0.998, 0.999, 0.9995]

    /// The row for `result`.
    init(result: SimulationResult, hedgeDelay: Duration?) {
        strategy = result.strategy
        self.hedgeDelay = hedgeDelay
        p50 = result.latency(at: 0.5)
        p95 = result.latency(at: 0.95)
        p99 = result.latency(at: 0.99)
        p999 = result.latency(at: 0.999)
        load = result.amplification
        successRate = result.successRate
        quantileLatencies = Self.chartQuantiles.map { result.latency(at: $0) }
    }
}
