/// How long a breaker stays open, growing across repeated trips.
///
/// The n-th trip in a row (0-based) opens for
/// `min(base × min(growthFactor^n, maximumMultiplier) × (1 ± jitter), maximum)`.
/// With `base` 30 s, factor 2, multiplier cap 10 and maximum 300 s this gives the rate-limit breaker's
/// 30 / 60 / 120 / 240 / 300 s.
public struct BreakerBackoff: Hashable, Sendable {
    /// The open duration of the first trip.
    public var base: Duration
    /// The factor the multiplier grows by on each trip in a row (1 keeps it constant).
    public var growthFactor: Double
    /// The largest multiplier.
    public var maximumMultiplier: Double
    /// The longest open duration, after jitter.
    public var maximum: Duration
    /// Relative jitter in `0...1` (0.3 = ±30 %), drawn from the breaker's injected generator; clamped to `0...1`,
    /// and one that is not finite applies none.
    public var jitter: Double

    /// Creates a schedule.
    ///
    /// - Parameters:
    ///   - base: The open duration of the first trip.
    ///   - growthFactor: The factor the multiplier grows by on each trip in a row (1 keeps it constant). Default: `1`.
    ///   - maximumMultiplier: The largest multiplier. Default: `1`.
    ///   - maximum: The longest open duration, after jitter; `nil` uses `base`. Default: `nil`.
    ///   - jitter: Relative jitter in `0...1` (0.3 = ±30 %), drawn from the breaker's injected generator; clamped to
    ///     `0...1`, and one that is not finite applies none. Default: `0`.
    public init(
        base: Duration, growthFactor: Double = 1, maximumMultiplier: Double = 1, maximum: Duration? = nil,
        jitter: Double = 0
    ) {
        self.base = base
        self.growthFactor = growthFactor
        self.maximumMultiplier = maximumMultiplier
        self.maximum = maximum ?? base
        self.jitter = jitter
    }

    /// A constant open duration without jitter.
    public static func constant(_ duration: Duration) -> BreakerBackoff {
        BreakerBackoff(base: duration)
    }

    /// The multiplier of the trip with 0-based index `tripIndex`.
    public func multiplier(tripIndex: Int) -> Double {
        let factor = growthFactor.isFinite && growthFactor >= 1 ? growthFactor : 1
        let cap = maximumMultiplier.isFinite && maximumMultiplier >= 1 ? maximumMultiplier : 1
        guard tripIndex > 0, factor > 1 else { return 1 }
        // Repeated multiplication (no Foundation `pow`); stops as soon as the cap is reached.
        var value = 1.0
        for _ in 0..<min(tripIndex, 4096) where value < cap {
            value *= factor
        }
        return min(value, cap)
    }

    /// The jitter applied: ``jitter`` clamped to `0...1`, and `0` when it is not finite.
    var appliedJitter: Double { jitter.isFinite ? min(max(jitter, 0), 1) : 0 }

    /// The open duration for trip `tripIndex`, given a uniform random `unit` in `0..<1`.
    public func duration(tripIndex: Int, unit: Double) -> Duration {
        let spread = appliedJitter
        let scale = multiplier(tripIndex: tripIndex) * (1 + spread * (2 * unit - 1))
        let seconds = DurationArithmetic.seconds(base) * scale
        let limit = DurationArithmetic.seconds(maximum)
        return DurationArithmetic.duration(seconds: min(seconds, limit))
    }

    /// The duration for `tripIndex`, drawing jitter from `generator` only when jitter is on.
    func duration(tripIndex: Int, using generator: inout PseudoRandomGenerator) -> Duration {
        let unit = jitter > 0 ? Double.random(in: 0..<1, using: &generator) : 0.5
        return duration(tripIndex: tripIndex, unit: unit)
    }
}
