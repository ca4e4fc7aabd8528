/// The settings of the Gradient2 algorithm, after Netflix concurrency-limits' `Gradient2Limit`: the limit
/// follows the ratio of a long-term average round trip to the latest one.
///
/// For every sample: the long-term round trip is an exponential average over ``longWindow`` samples (a plain
/// average over the first 10), cut by 5 % whenever it is more than twice the latest round trip (so it comes
/// down quickly after a long overload); then, unless the caller is using less than half the limit (it
/// learns nothing about the backend), `gradient = clamp(tolerance × long ÷ latest, 0.5, 1)`,
/// `target = limit × gradient + queueSize`, and the limit moves ``smoothing`` of the way to `target`. A backend
/// whose latency stays within ``tolerance`` of its usual round trip lets the limit grow by `queueSize` per
/// sample (times the smoothing); one that slows down by more pulls it down, by at most half per sample.
///
/// Defaults are Netflix's: smoothing 0.2, tolerance 1.5, a long window of 600 samples, a queue of 4.
public struct Gradient2Limit: Hashable, Sendable {
    /// The share of the way to the new target the limit moves per sample (0 < smoothing ≤ 1).
    public var smoothing = 0.2
    /// How much slower than the long-term round trip the latest may be before the limit shrinks (≥ 1).
    public var tolerance = 1.5
    /// Samples the long-term round trip averages over (≥ 1).
    public var longWindow = 600
    /// Calls the limit may add per sample while the latency holds: the queue it allows at the backend.
    public var queueSize = 4.0

    /// Creates the settings.
    ///
    /// - Parameters:
    ///   - smoothing: The share of the way to the new target the limit moves per sample. Default: `0.2`.
    ///   - tolerance: How much slower than the long-term round trip the latest may be. Default: `1.5`.
    ///   - longWindow: Samples the long-term round trip averages over. Default: `600`.
    ///   - queueSize: Calls the limit may add per sample while the latency holds. Default: `4`.
    public init(smoothing: Double = 0.2, tolerance: Double = 1.5, longWindow: Int = 600, queueSize: Double = 4) {
        self.smoothing = smoothing
        self.tolerance = tolerance
        self.longWindow = longWindow
        self.queueSize = queueSize
    }

    /// The settings clamped to their ranges (non-finite values fall back to the defaults).
    var sanitized: Gradient2Limit {
        let defaults = Gradient2Limit()
        return Gradient2Limit(
            smoothing: AdaptiveLimitMemory.clamp(smoothing, 0.001...1, or: defaults.smoothing),
            tolerance: AdaptiveLimitMemory.clamp(tolerance, 1...100, or: defaults.tolerance),
            longWindow: min(max(longWindow, 1), 1_000_000),
            queueSize: AdaptiveLimitMemory.clamp(queueSize, 0...1_000, or: defaults.queueSize))
    }

    /// The limit after `sample`, from `limit`; `memory` keeps the long-term round trip.
    func nextLimit(_ limit: Double, _ sample: AdaptiveLimitSample, _ memory: inout AdaptiveLimitMemory) -> Double {
        let latest = sample.roundTrip
        let long = memory.averageLong(latest, window: longWindow)
        if long / latest > 2 { memory.longRoundTrip *= 0.95 }
        if Double(sample.inFlight) < limit / 2 { return limit }
        let gradient = max(0.5, min(1, tolerance * long / latest))
        let target = limit * gradient + queueSize
        return limit * (1 - smoothing) + target * smoothing
    }

    /// `gradient2(tolerance: 1.5, smoothing: 0.2)`.
    var summary: String {
        "gradient2(tolerance: \(tolerance), smoothing: \(smoothing), long-window: \(longWindow), queue: \(queueSize))"
    }
}
