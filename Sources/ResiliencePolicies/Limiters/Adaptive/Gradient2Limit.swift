/// The settings of the Gradient2 algorithm, after Netflix concurrency-limits' `Gradient2Limit`: the limit
/// follows the ratio of a baseline round trip to the recent one.
///
/// For every sample: the recent round trip is an exponential average over about one round trip's samples
/// (`max(shortWindow, limit)`: about `limit` calls end per round trip); the baseline falls towards a faster one
/// as an average over ``longWindow`` samples and rises towards a slower one, at most `tolerance` × itself, with
/// the time constant ``baselineRise``. Then, unless the caller is using less than
/// half the limit (it learns nothing about the backend), `gradient = clamp(tolerance × baseline ÷ recent,
/// 0.5, 1 + growth)` and the target is `limit × gradient`: the calls the backend serves with no more than the
/// tolerated queue. Without a queue the limit grows by up to ``growth`` per step; past the tolerance it
/// shrinks, by at most half, but only when the call was admitted with at least 90 % of the limit in flight
/// (a queue the caller's own burst causes below its limit is not the limit's doing). Until the first queue or
/// drop the limit is in its slow start (TCP's, RFC 5681 § 3.1): one more per call that ends without a queue,
/// so it doubles per round trip while the caller fills it; the first queue cuts it to the calls that were in
/// flight when the queued call was admitted, times the gradient, and the gradient rule takes over. The limit
/// then moves `smoothing ÷ limit` of the way to the target per sample,
/// so about ``smoothing`` of the way per round trip whatever the traffic. At equilibrium the recent round trip
/// is `tolerance` × the baseline: the limit settles at `tolerance` × the backend's concurrent capacity, measured
/// from 40 to 400 slots (below about 30 the whole-number limit and a small caller's bursts move it a call or
/// two higher; `Docs/AdaptiveLimits.md`).
///
/// One round trip is bounded before it enters the averages: a sample longer than `tolerance ÷ 0.5` × the
/// baseline (2.2 × with the defaults; × the recent round trip while the first window learns it) enters at that
/// bound. From there on the gradient is at its floor, so a longer round trip tells the limit nothing it could
/// act on, and a call that spans something other than the backend (an app suspended for minutes mid-request,
/// its clock running on) would otherwise hold the recent round trip far above that floor for hundreds of
/// samples and drive the limit to its minimum. A bounded sample raises the recent round trip by at most
/// (2.2 × baseline − recent) ÷ window, 6 % of the baseline at the 20-sample window, and, above the minimum
/// limit, does not move the baseline (nor does the time it spanned count towards the baseline's rise). It is
/// not a drop: a round trip at the bound is already the slowest the algorithm reads. A slowdown that lasts
/// still cuts the limit: one up to 2.2 × is not bounded, a longer one enters at the bound and holds the
/// gradient near its floor; at the minimum limit the baseline follows bounded samples too, and the bound rises
/// with it. The first sample has nothing to be measured against and enters as it is. Netflix's
/// `Gradient2Limit` takes each sample as it is (only its gradient's floor of 0.5 limits one step); Envoy's
/// adaptive concurrency filter and failsafe-go's adaptive limiter summarise each window of samples by a
/// percentile (p50, p90), which one sample cannot move.
///
/// Where it departs from Netflix's code, and why (measured in `Docs/AdaptiveLimits.md`):
/// - Netflix's long-term round trip is an exponential average over 600 samples, which at 1,000 calls per
///   second is 0.6 s, so under a lasting overload it soon equals the queued round trip and the limit stops
///   shrinking; here the baseline falls as that average does, but rises with a time constant instead (10
///   minutes; 2 seconds while the limit sits at the limiter's minimum, where the caller's own calls cannot be
///   what queues, so a backend that is slower for good is followed at once). It does not follow a lower recent
///   round trip straight down: that pins it at the lowest recent average seen, a few per cent under the mean
///   within seconds, and the recent average's noise then reads as a queue. Nor does it rise towards more than
///   `tolerance` × itself, except at the minimum: a queue past the tolerance is one the limit is cutting (after
///   a backend loses capacity, clients' calls queue up to their timeout for a few seconds), and rising towards
///   it raised the baseline, and so the limit it settles at, by several per cent.
/// - Netflix clamps the gradient to 1 and adds a fixed queue (4) to every target, so the limit settles at
///   `tolerance × capacity + 4`: 52 for a backend of 40 slots, 13 for one of 8. Here the gradient itself may
///   exceed 1 (up to `1 + growth`), so the equilibrium is proportional to the capacity and the limit slows
///   down as it nears it instead of overshooting.
/// - Netflix feeds the algorithm one sample at a time (its `WindowedLimit` averages them first); here the
///   recent average spans about a round trip, so a service time's jitter is not read as queueing, and the
///   first ``shortWindow`` samples only learn the round trip.
/// - Each sample moves the limit `smoothing ÷ limit` (not `smoothing`): a queue is reacted to about once per
///   round trip, not a hundred times before it can drain.
public struct Gradient2Limit: Hashable, Sendable {
    /// The share of the way to the target the limit moves per round trip (`smoothing ÷ limit` per sample;
    /// 0 < smoothing ≤ 1).
    public var smoothing = 0.3
    /// How much slower than the baseline the recent round trip may be before the limit shrinks (≥ 1): the
    /// queue the limit accepts, as a share of the backend's capacity.
    public var tolerance = 1.1
    /// The fewest samples the recent round trip averages over, and the samples that only learn the round trip
    /// before the limit moves (≥ 1).
    public var shortWindow = 20
    /// The time constant, in seconds, with which the baseline rises towards a slower recent round trip.
    public var baselineRise = 600.0
    /// The most the gradient exceeds 1 by while the latency holds: the limit's growth per step (0 ≤ growth ≤ 10).
    public var growth = 0.1
    /// The samples over which the baseline falls towards a faster recent round trip, as an exponential average
    /// (Netflix's `longWindow`, ≥ 1).
    public var longWindow = 600

    /// Creates the settings.
    ///
    /// - Parameters:
    ///   - smoothing: The share of the way to the target the limit moves per round trip. Default: `0.3`.
    ///   - tolerance: How much slower than the baseline the recent round trip may be. Default: `1.1`.
    ///   - shortWindow: The fewest samples the recent round trip averages over. Default: `20`.
    ///   - baselineRise: The time constant, in seconds, with which the baseline rises. Default: `600`.
    ///   - growth: The most the gradient exceeds 1 by while the latency holds. Default: `0.1`.
    ///   - longWindow: The samples over which the baseline falls towards a faster round trip. Default: `600`.
    public init(
        smoothing: Double = 0.3, tolerance: Double = 1.1, shortWindow: Int = 20, baselineRise: Double = 600,
        growth: Double = 0.1, longWindow: Int = 600
    ) {
        self.smoothing = smoothing
        self.tolerance = tolerance
        self.shortWindow = shortWindow
        self.baselineRise = baselineRise
        self.growth = growth
        self.longWindow = longWindow
    }

    /// The share of the limit in flight at a call's admission from which the limit is binding: below it, a
    /// queue does not shrink the limit.
    static let bindingShare = 0.9

    /// The baseline's time constant, in seconds, while the limit sits at the limiter's minimum.
    static let riseAtMinimum = 2.0

    /// The least the gradient may be: one step's target is at least half the limit.
    static let gradientFloor = 0.5

    /// The settings clamped to their ranges (non-finite values fall back to the defaults).
    var sanitized: Gradient2Limit {
        let defaults = Gradient2Limit()
        return Gradient2Limit(
            smoothing: AdaptiveLimitMemory.clamp(smoothing, 0.001...1, or: defaults.smoothing),
            tolerance: AdaptiveLimitMemory.clamp(tolerance, 1...100, or: defaults.tolerance),
            shortWindow: min(max(shortWindow, 1), 1_000_000),
            baselineRise: AdaptiveLimitMemory.clamp(baselineRise, 0.001...1e9, or: defaults.baselineRise),
            growth: AdaptiveLimitMemory.clamp(growth, 0...10, or: defaults.growth),
            longWindow: min(max(longWindow, 1), 1_000_000))
    }

    /// The limit after `sample`, from `limit` (`minimum` is the limiter's lower bound); `memory` keeps the
    /// recent and the baseline round trips.
    func nextLimit(
        _ limit: Double, _ sample: AdaptiveLimitSample, minimum: Double, _ memory: inout AdaptiveLimitMemory
    ) -> Double {
        // A round trip past the one that holds the gradient at its floor (tolerance ÷ floor × the baseline) tells
        // the limit nothing more it could act on: it enters the averages at that bound.
        let bound = memory.roundTripBound(ratio: tolerance / Self.gradientFloor)
        let recent = memory.averageShort(min(sample.roundTrip, bound), window: max(Double(shortWindow), limit))
        guard memory.samples >= shortWindow else { return limit }
        let atMinimum = limit <= minimum
        let baseline: Double
        if sample.roundTrip > bound && !atMinimum && memory.longRoundTrip > 0 {
            // Above the minimum a bounded sample is a queue the limit is cutting or a call that spanned something
            // else (the app's suspension): it does not move the baseline, and the time it spanned is not counted.
            baseline = memory.holdBaseline(now: sample.completedAt)
        } else {
            // Above the minimum, a recent round trip past the tolerance is a queue the limit is cutting, not a
            // slower backend: the baseline rises towards at most `tolerance` × itself.
            baseline = memory.followBaseline(
                recent, now: sample.completedAt,
                rise: atMinimum ? min(baselineRise, Self.riseAtMinimum) : baselineRise,
                fallWindow: Double(longWindow), riseCeiling: atMinimum ? .infinity : tolerance)
        }
        if Double(sample.inFlight) < limit / 2 { return limit }
        let gradient = max(Self.gradientFloor, min(1 + growth, tolerance * baseline / recent))
        if !memory.queueSeen {
            return slowStart(limit, sample, gradient: gradient, &memory)
        }
        // A queue seen while the caller is not at its limit (its own burst at a backend with room) is not the
        // limit's doing: cutting the limit would not remove it, only reject the next burst.
        if gradient < 1 && Double(sample.inFlight) < Self.bindingShare * limit { return limit }
        let target = limit * gradient
        let step = smoothing / max(limit, 1)
        return limit * (1 - step) + target * step
    }

    /// The limit after `sample` during the slow start (TCP's, RFC 5681 § 3.1): one more per call that ends
    /// without a queue, so a caller that fills its limit doubles it per round trip. As in TCP Vegas (Brakmo &
    /// Peterson 1995), the first sign of a queue ends it, not only a loss: the gradient below 1 for a call
    /// admitted with at least half the limit in flight, or a drop. The limit then falls to the calls that were
    /// in flight when that call was admitted, times the gradient (itself at least 0.5). That call was admitted
    /// about a round trip ago, at about half today's limit when the caller fills it: the cut is TCP's halving at
    /// the end of its slow start, measured instead of assumed.
    private func slowStart(
        _ limit: Double, _ sample: AdaptiveLimitSample, gradient: Double, _ memory: inout AdaptiveLimitMemory
    ) -> Double {
        guard gradient < 1 || sample.dropped else { return limit + 1 }
        memory.queueSeen = true
        return min(limit, Double(sample.inFlight)) * min(gradient, 1)
    }

    /// `gradient2(tolerance: 1.1, smoothing: 0.3, …)`.
    var summary: String {
        "gradient2(tolerance: \(tolerance), smoothing: \(smoothing), short-window: \(shortWindow), "
            + "long-window: \(longWindow), baseline-rise: \(baselineRise) s, growth: \(growth))"
    }
}
