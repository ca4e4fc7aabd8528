/// The settings of the Gradient2 algorithm, after Netflix concurrency-limits' `Gradient2Limit`: the limit
/// follows the ratio of a baseline round trip to the recent one.
///
/// For every sample: the recent round trip is an exponential average over ``shortWindow`` samples; the
/// baseline follows it straight down and rises towards it with the time constant ``baselineRise``. Then,
/// unless the caller is using less than half the limit (it learns nothing about the backend),
/// `gradient = clamp(tolerance × baseline ÷ recent, 0.5, 1)`, `target = limit × gradient + queueSize`, and the
/// limit moves `smoothing × min(1, shortWindow ÷ limit)` of the way to `target` (about `limit` samples end
/// per round trip, so this is about `shortWindow` smoothed steps per round trip). A backend whose latency stays within ``tolerance`` of its
/// baseline lets the limit grow by `queueSize` per sample (times the smoothing); one that slows down by more
/// pulls it down, by at most half per sample. At equilibrium the recent round trip is `tolerance` × the
/// baseline: the limit settles near `tolerance` × the backend's concurrent capacity.
///
/// Where it departs from Netflix's code, and why (measured in `Docs/AdaptiveLimits.md`): Netflix's
/// long-term round trip is an exponential average over 600 samples, which at 1,000 calls per second is 0.6 s,
/// so under a lasting overload it soon equals the queued round trip and the limit stops shrinking (the
/// storm simulator's p99 stays at 3.8× the unloaded round trip); here the baseline rises with a time
/// constant instead. Netflix feeds the algorithm one sample at a time (its `WindowedLimit` averages them
/// first); here the short average does that. And the tolerance is 1.2 instead of 1.5: the tolerance is the
/// queue the limit accepts, and 1.5 settles 50 % above the backend's capacity.
public struct Gradient2Limit: Hashable, Sendable {
    /// The share of the way to the new target the limit moves per sample (0 < smoothing ≤ 1).
    public var smoothing = 0.2
    /// How much slower than the baseline the recent round trip may be before the limit shrinks (≥ 1).
    public var tolerance = 1.2
    /// Samples the recent round trip averages over (≥ 1).
    public var shortWindow = 20
    /// The time constant, in seconds, with which the baseline rises towards a slower recent round trip.
    public var baselineRise = 60.0
    /// Calls the limit may add per sample while the latency holds: the queue it allows at the backend.
    public var queueSize = 4.0

    /// Creates the settings.
    ///
    /// - Parameters:
    ///   - smoothing: The share of the way to the new target the limit moves per sample. Default: `0.2`.
    ///   - tolerance: How much slower than the baseline the recent round trip may be. Default: `1.2`.
    ///   - shortWindow: Samples the recent round trip averages over. Default: `20`.
    ///   - baselineRise: The time constant, in seconds, with which the baseline rises. Default: `60`.
    ///   - queueSize: Calls the limit may add per sample while the latency holds. Default: `4`.
    public init(
        smoothing: Double = 0.2, tolerance: Double = 1.2, shortWindow: Int = 20, baselineRise: Double = 60,
        queueSize: Double = 4
    ) {
        self.smoothing = smoothing
        self.tolerance = tolerance
        self.shortWindow = shortWindow
        self.baselineRise = baselineRise
        self.queueSize = queueSize
    }

    /// The settings clamped to their ranges (non-finite values fall back to the defaults).
    var sanitized: Gradient2Limit {
        let defaults = Gradient2Limit()
        return Gradient2Limit(
            smoothing: AdaptiveLimitMemory.clamp(smoothing, 0.001...1, or: defaults.smoothing),
            tolerance: AdaptiveLimitMemory.clamp(tolerance, 1...100, or: defaults.tolerance),
            shortWindow: min(max(shortWindow, 1), 1_000_000),
            baselineRise: AdaptiveLimitMemory.clamp(baselineRise, 0.001...1e9, or: defaults.baselineRise),
            queueSize: AdaptiveLimitMemory.clamp(queueSize, 0...1_000, or: defaults.queueSize))
    }

    /// The limit after `sample`, from `limit`; `memory` keeps the recent and the baseline round trips.
    func nextLimit(_ limit: Double, _ sample: AdaptiveLimitSample, _ memory: inout AdaptiveLimitMemory) -> Double {
        let recent = memory.averageShort(sample.roundTrip, window: shortWindow)
        let baseline = memory.followBaseline(recent, now: sample.completedAt, rise: baselineRise)
        if Double(sample.inFlight) < limit / 2 { return limit }
        let gradient = max(0.5, min(1, tolerance * baseline / recent))
        let target = limit * gradient + queueSize
        // About `limit` samples end per round trip: the step shrinks with the limit, so the limit moves by
        // about `shortWindow` smoothed steps per round trip whatever the traffic, instead of reacting to a
        // queue a hundred times before the queue can drain.
        let step = smoothing * min(1, Double(shortWindow) / max(limit, 1))
        return limit * (1 - step) + target * step
    }

    /// `gradient2(tolerance: 1.2, smoothing: 0.2, …)`.
    var summary: String {
        "gradient2(tolerance: \(tolerance), smoothing: \(smoothing), short-window: \(shortWindow), "
            + "baseline-rise: \(baselineRise) s, queue: \(queueSize))"
    }
}
