/// The settings of the AIMD algorithm (additive increase, multiplicative decrease, as in TCP Reno), after
/// Netflix concurrency-limits' `AIMDLimit`: the limit shrinks by ``backoffRatio`` when a call is dropped or
/// takes longer than ``latencyThreshold``, and grows by one per sample while the caller uses at least half of
/// it.
///
/// It learns from losses, not from a round trip that creeps up, so it suits backends that shed load
/// themselves (answering `503` or timing out); against one that only slows down it keeps a long queue until
/// the threshold is crossed. It keeps no average: one very long round trip (a call that spans the app's
/// suspension) is one drop, a cut by ``backoffRatio``. Defaults are Netflix's: a backoff of 0.9 and a threshold
/// of 5 seconds.
public struct AIMDLimit: Hashable, Sendable {
    /// The factor a drop multiplies the limit by (0.5 ≤ ratio < 1).
    public var backoffRatio = 0.9
    /// A call slower than this counts as a drop.
    public var latencyThreshold: Duration = .seconds(5)

    /// Creates the settings.
    ///
    /// - Parameters:
    ///   - backoffRatio: The factor a drop multiplies the limit by. Default: `0.9`.
    ///   - latencyThreshold: A call slower than this counts as a drop. Default: 5 seconds.
    public init(backoffRatio: Double = 0.9, latencyThreshold: Duration = .seconds(5)) {
        self.backoffRatio = backoffRatio
        self.latencyThreshold = latencyThreshold
    }

    /// The settings clamped to their ranges (non-finite values fall back to the defaults).
    var sanitized: AIMDLimit {
        AIMDLimit(
            backoffRatio: AdaptiveLimitMemory.clamp(backoffRatio, 0.5...0.999, or: 0.9),
            latencyThreshold: max(latencyThreshold, .milliseconds(1)))
    }

    /// The limit after `sample`, from `limit`.
    func nextLimit(_ limit: Double, _ sample: AdaptiveLimitSample) -> Double {
        if sample.dropped || sample.roundTrip > DurationArithmetic.seconds(latencyThreshold) {
            return limit * backoffRatio
        }
        if Double(sample.inFlight) * 2 >= limit { return limit + 1 }
        return limit
    }

    /// `aimd(backoff: 0.9, threshold: 5 seconds)`.
    var summary: String { "aimd(backoff: \(backoffRatio), threshold: \(latencyThreshold))" }
}
