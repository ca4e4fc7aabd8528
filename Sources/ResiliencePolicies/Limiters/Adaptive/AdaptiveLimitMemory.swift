import Foundation

/// What the algorithms remember between samples: the long-term and the smallest round trip, and the samples
/// counted since the last probe. Plain data, kept in the limiter's locked state.
struct AdaptiveLimitMemory: Hashable, Sendable {
    /// Gradient2's recent round trip (an average over its short window), in seconds (0 until the first sample).
    var shortRoundTrip = 0.0
    /// Gradient2's baseline round trip, in seconds (0 until the first sample).
    var longRoundTrip = 0.0
    /// When Gradient2's baseline last moved, in seconds on the limiter's clock.
    var longUpdatedAt = 0.0
    /// Vegas's smallest round trip, in seconds (0 until the first sample).
    var smallestRoundTrip = 0.0
    /// Vegas's samples since the smallest round trip was last re-learned.
    var samplesSinceProbe = 0

    /// Gradient2's samples so far.
    var samples = 0
    /// Whether Gradient2 has seen a queue (its slow start is over).
    var queueSeen = false

    /// Adds `sample` to the recent round trip, an exponential average with weight 1 ÷ `window` (the plain
    /// mean of the samples so far while there are fewer than `window`), and returns it.
    mutating func averageShort(_ sample: Double, window: Double) -> Double {
        samples += 1
        let weight = 1 / min(max(window, 1), Double(samples))
        shortRoundTrip += (sample - shortRoundTrip) * weight
        return shortRoundTrip
    }

    /// The longest round trip a sample may enter the averages with: `ratio` × the baseline, or × the recent
    /// round trip before there is a baseline (infinite before the first sample, which has nothing to be measured
    /// against).
    func roundTripBound(ratio: Double) -> Double {
        let reference = longRoundTrip > 0 ? longRoundTrip : shortRoundTrip
        return reference > 0 ? ratio * reference : .infinity
    }

    /// Leaves the baseline where it is at `now` and returns it: the time up to `now` does not count towards a
    /// later rise (for a sample whose round trip is no measure of the backend).
    mutating func holdBaseline(now: Double) -> Double {
        longUpdatedAt = now
        return longRoundTrip
    }

    /// Moves the baseline towards `recent` at `now` and returns it: down as an exponential average over
    /// `fallWindow` samples, up with the time constant `rise` (seconds) towards at most `riseCeiling` × itself.
    /// The first call sets it to `recent`.
    ///
    /// Falling as an average keeps the baseline near the recent round trip's mean while the backend does not
    /// queue: following each lower recent average straight down pins it at the lowest one seen, a few per cent
    /// under the mean within seconds, and the recent average's ordinary noise then reads as a queue. Rising
    /// with a time constant keeps a queue that lasts from becoming the new normal at once, while a backend that
    /// is slower for good is followed within a few `rise`. The ceiling keeps a queue far past the tolerated
    /// one (the transient after a backend loses capacity, until the limit catches up) from raising it: 4 s at
    /// 10 × the baseline would raise it by 9 × 4 ÷ 600 = 6 % with a 600 s time constant, and the limit with it.
    mutating func followBaseline(
        _ recent: Double, now: Double, rise: Double, fallWindow: Double, riseCeiling: Double = .infinity
    ) -> Double {
        if longRoundTrip == 0 {
            longRoundTrip = recent
        } else if recent <= longRoundTrip {
            longRoundTrip += (recent - longRoundTrip) / max(fallWindow, 1)
        } else if now > longUpdatedAt {
            // 1 − e⁰ is 0: a sample ending at the same instant as the last one (the simulator's clock) does
            // not move the baseline, and skips the rise share.
            let towards = min(recent, longRoundTrip * riseCeiling)
            longRoundTrip += (towards - longRoundTrip) * Self.riseShare(elapsed: now - longUpdatedAt, rise: rise)
        }
        longUpdatedAt = now
        return longRoundTrip
    }

    /// `1 − e^(−elapsed ÷ rise)`: the share of the way a quantity with time constant `rise` moves in `elapsed`.
    ///
    /// Between the samples of a busy limiter `x = elapsed ÷ rise` is tiny (microseconds over minutes). There
    /// `x − x²/2 + x³/6` agrees with it to within a few units in the last place (the first term left out,
    /// x⁴/24, is below 2⁻⁵³ × x for x < 10⁻⁵) and costs a few multiplications instead of a call of the
    /// exponential on every sample. Larger steps use `expm1`, which, unlike `1 − exp(−x)`, loses no digits to
    /// cancellation.
    static func riseShare(elapsed: Double, rise: Double) -> Double {
        let x = elapsed / rise
        guard x < 1e-5 else { return -expm1(-x) }
        return x * (1 - x * (0.5 - x / 6))
    }

    /// `value` within `range`, or `fallback` when it is not finite.
    static func clamp(_ value: Double, _ range: ClosedRange<Double>, or fallback: Double) -> Double {
        guard value.isFinite else { return fallback }
        return min(max(value, range.lowerBound), range.upperBound)
    }
}
