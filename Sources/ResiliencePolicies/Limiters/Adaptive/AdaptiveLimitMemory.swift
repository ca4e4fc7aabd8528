/// What the algorithms remember between samples: the long-term and the smallest round trip, and the samples
/// counted since the last probe. Plain data, kept in the limiter's locked state.
struct AdaptiveLimitMemory: Hashable, Sendable {
    /// Gradient2's long-term round trip, in seconds (0 until the first sample).
    var longRoundTrip = 0.0
    /// Samples averaged into ``longRoundTrip`` so far (up to the warm-up of 10).
    var longSamples = 0
    /// Vegas's smallest round trip, in seconds (0 until the first sample).
    var smallestRoundTrip = 0.0
    /// Vegas's samples since the smallest round trip was last re-learned.
    var samplesSinceProbe = 0

    /// Adds `sample` to the long-term average over `window` samples (a plain average over the first 10, then
    /// an exponential one with weight 2 ÷ (window + 1), as Netflix's `ExpAvgMeasurement`) and returns it.
    mutating func averageLong(_ sample: Double, window: Int) -> Double {
        if longSamples < 10 {
            longSamples += 1
            longRoundTrip += (sample - longRoundTrip) / Double(longSamples)
        } else {
            let weight = 2 / (Double(window) + 1)
            longRoundTrip = longRoundTrip * (1 - weight) + sample * weight
        }
        return longRoundTrip
    }

    /// `value` within `range`, or `fallback` when it is not finite.
    static func clamp(_ value: Double, _ range: ClosedRange<Double>, or fallback: Double) -> Double {
        guard value.isFinite else { return fallback }
        return min(max(value, range.lowerBound), range.upperBound)
    }
}
