import Foundation

/// A distribution of durations (service times, network delays) sampled from a seeded generator.
public enum LatencyDistribution: Hashable, Sendable, CustomStringConvertible {
    /// Always the same duration.
    case constant(Duration)
    /// Uniform between the two bounds.
    case uniform(Duration, Duration)
    /// Exponential with the given mean (memoryless service, as in an M/M/c queue).
    case exponential(mean: Duration)
    /// The absolute value of a normal variate: `|N(mean, standardDeviation)|`.
    case absoluteNormal(mean: Duration, standardDeviation: Duration)
    /// Log-normal with the given median and shape `sigma` (long right tail, like real service times).
    case logNormal(median: Duration, sigma: Double)
    /// `base`, except with probability `probability` a sample of `tail` instead (a slow minority).
    indirect case mixture(base: LatencyDistribution, tail: LatencyDistribution, probability: Double)

    /// Draws one duration (never negative).
    public func sample(using generator: inout PseudoRandomGenerator) -> Duration {
        switch self {
        case .constant(let value):
            return value.attosecondCount > 0 ? value : .zero
        case .uniform(let low, let high):
            let unit = Self.unit(&generator)
            return max(low + (high - low).scaled(by: unit), .zero)
        case .exponential(let mean):
            let unit = Self.unit(&generator)
            return mean.scaled(by: -log(1 - unit))
        case .absoluteNormal(let mean, let deviation):
            let value = Self.seconds(mean) + Self.seconds(deviation) * Self.standardNormal(&generator)
            return Duration(seconds: abs(value))
        case .logNormal(let median, let sigma):
            return median.scaled(by: exp(sigma * Self.standardNormal(&generator)))
        case .mixture(let base, let tail, let probability):
            return Self.unit(&generator) < probability
                ? tail.sample(using: &generator) : base.sample(using: &generator)
        }
    }

    /// The distribution's mean (exact for every case).
    public var mean: Duration {
        switch self {
        case .constant(let value): return value
        case .uniform(let low, let high): return (low + high) / 2
        case .exponential(let mean): return mean
        case .absoluteNormal(let mean, let deviation):
            // E|X| for X ~ N(μ, σ): σ·√(2/π)·e^(−μ²/2σ²) + μ·(1 − 2Φ(−μ/σ)).
            let mu = Self.seconds(mean)
            let sigma = Self.seconds(deviation)
            guard sigma > 0 else { return .seconds(abs(mu)) }
            let ratio = mu / sigma
            let folded = sigma * (2 / Double.pi).squareRoot() * exp(-ratio * ratio / 2)
            return .seconds(folded + mu * erf(ratio / 2.0.squareRoot()))
        case .logNormal(let median, let sigma): return median * exp(sigma * sigma / 2)
        case .mixture(let base, let tail, let probability):
            return base.mean * (1 - probability) + tail.mean * probability
        }
    }

    /// A short description, e.g. `exp(mean 100 ms)`.
    public var description: String {
        switch self {
        case .constant(let value): "\(value)"
        case .uniform(let low, let high): "uniform(\(low)…\(high))"
        case .exponential(let mean): "exponential(mean \(mean))"
        case .absoluteNormal(let mean, let deviation): "|N(\(mean), \(deviation))|"
        case .logNormal(let median, let sigma): "lognormal(median \(median), σ \(sigma))"
        case .mixture(let base, let tail, let probability): "\(base), \(probability * 100)% \(tail)"
        }
    }

    static func unit(_ generator: inout PseudoRandomGenerator) -> Double {
        Double(generator.next() >> 11) * 0x1p-53
    }

    /// `duration` in seconds, from its `components` (worked out on the native `Int128`).
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.attosecondCount.quotientAndRemainder(
            dividingBy: 1_000_000_000_000_000_000 as UInt64)
        return Double(Int64(seconds)) + Double(Int64(attoseconds)) * 1e-18
    }

    /// A standard normal variate (Box–Muller).
    static func standardNormal(_ generator: inout PseudoRandomGenerator) -> Double {
        let first = max(unit(&generator), 0x1p-53)
        let second = unit(&generator)
        return (-2 * log(first)).squareRoot() * cos(2 * Double.pi * second)
    }
}
