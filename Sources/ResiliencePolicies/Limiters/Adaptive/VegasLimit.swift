import Foundation

/// The settings of the Vegas algorithm, after TCP Vegas (Brakmo and Peterson, 1995) as Netflix
/// concurrency-limits' `VegasLimit` applies it to concurrency: the queue at the backend is estimated from the
/// smallest round trip seen (the round trip without queueing) and kept between two bounds.
///
/// For every sample: a call answered in no time teaches only its drop; a round trip below the smallest seen
/// becomes the new smallest (and nothing else happens); every `probeMultiplier × limit` samples the smallest
/// is forgotten and re-learned, so a backend that became slower for good is not read as queueing forever. A
/// dropped call takes `log10(limit)` off the limit. Otherwise, unless the caller uses less than half the limit,
/// the queue is `ceil(limit × (1 − smallest ÷ latest))`: at most `log10(limit)` adds ``betaFactor``
/// `× log10(limit)`; below ``alphaFactor`` `× log10(limit)` adds `log10(limit)`; above
/// `betaFactor × log10(limit)` takes `log10(limit)` off; in between the limit holds. The limit then moves
/// ``smoothing`` of the way there.
///
/// One very long round trip (a call that spans the app's suspension) reads as a queue past beta: at most one
/// step of `log10(limit)` down, as a drop. It never becomes the smallest round trip except as a probe's first
/// sample, and then the next faster one replaces it.
///
/// Defaults are Netflix's: alpha 3, beta 6, smoothing 1, probe every 30 × limit samples.
public struct VegasLimit: Hashable, Sendable {
    /// The queue below which the limit grows, as a multiple of `log10(limit)` (> 0).
    public var alphaFactor = 3.0
    /// The queue above which the limit shrinks, as a multiple of `log10(limit)` (≥ alpha).
    public var betaFactor = 6.0
    /// The share of the way to the new limit it moves per sample (0 < smoothing ≤ 1).
    public var smoothing = 1.0
    /// The smallest round trip is re-learned every `probeMultiplier × limit` samples (≥ 1).
    public var probeMultiplier = 30

    /// Creates the settings.
    ///
    /// - Parameters:
    ///   - alphaFactor: The queue below which the limit grows, as a multiple of `log10(limit)`. Default: `3`.
    ///   - betaFactor: The queue above which the limit shrinks, as a multiple of `log10(limit)`. Default: `6`.
    ///   - smoothing: The share of the way to the new limit it moves per sample. Default: `1`.
    ///   - probeMultiplier: The smallest round trip is re-learned every `probeMultiplier × limit` samples.
    ///     Default: `30`.
    public init(alphaFactor: Double = 3, betaFactor: Double = 6, smoothing: Double = 1, probeMultiplier: Int = 30) {
        self.alphaFactor = alphaFactor
        self.betaFactor = betaFactor
        self.smoothing = smoothing
        self.probeMultiplier = probeMultiplier
    }

    /// The settings clamped to their ranges (non-finite values fall back to the defaults).
    var sanitized: VegasLimit {
        let defaults = VegasLimit()
        let alpha = AdaptiveLimitMemory.clamp(alphaFactor, 0.01...1_000, or: defaults.alphaFactor)
        return VegasLimit(
            alphaFactor: alpha,
            betaFactor: AdaptiveLimitMemory.clamp(betaFactor, alpha...max(alpha, 1_000), or: max(alpha, 6)),
            smoothing: AdaptiveLimitMemory.clamp(smoothing, 0.001...1, or: defaults.smoothing),
            probeMultiplier: min(max(probeMultiplier, 1), 1_000_000))
    }

    /// The limit after `sample`, from `limit`; `memory` keeps the smallest round trip and the probe count.
    func nextLimit(_ limit: Double, _ sample: AdaptiveLimitSample, _ memory: inout AdaptiveLimitMemory) -> Double {
        let latest = sample.roundTrip
        let step = log10(max(limit, 1))
        // A call answered in no time (a clock that did not move; the limiter floors it at 1 ns) is not the
        // round trip without queueing, which every later call would then read as a full queue; it teaches only
        // its drop.
        guard latest > Self.noTime else {
            return sample.dropped ? limit * (1 - smoothing) + (limit - step) * smoothing : limit
        }
        memory.samplesSinceProbe += 1
        if Double(memory.samplesSinceProbe) >= Double(probeMultiplier) * limit {
            memory.samplesSinceProbe = 0
            memory.smallestRoundTrip = latest
            return limit
        }
        if memory.smallestRoundTrip == 0 || latest < memory.smallestRoundTrip {
            memory.smallestRoundTrip = latest
            return limit
        }
        let target: Double
        if sample.dropped {
            target = limit - step
        } else if Double(sample.inFlight) * 2 < limit {
            return limit
        } else {
            let queue = (limit * (1 - memory.smallestRoundTrip / latest)).rounded(.up)
            if queue <= step {
                target = limit + betaFactor * step
            } else if queue < alphaFactor * step {
                target = limit + step
            } else if queue > betaFactor * step {
                target = limit - step
            } else {
                return limit
            }
        }
        return limit * (1 - smoothing) + target * smoothing
    }

    /// The round trip, in seconds, of a call answered in no time (the limiter's floor for a round trip).
    static let noTime = 1e-9

    /// `vegas(alpha: 3, beta: 6)`.
    var summary: String {
        "vegas(alpha: \(alphaFactor), beta: \(betaFactor), smoothing: \(smoothing), probe: \(probeMultiplier))"
    }
}
