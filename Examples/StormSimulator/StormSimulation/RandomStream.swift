import ResilienceCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// A seeded random stream with the few draws the simulator needs, built on Core's `PseudoRandomGenerator`.
struct RandomStream: RandomNumberGenerator {
    private var generator: PseudoRandomGenerator

    /// A stream fully determined by `seed`.
    init(seed: UInt64) {
        generator = PseudoRandomGenerator(seed: seed)
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        generator.next()
    }

    /// A uniform value in `[0, 1)` with 53 random bits.
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// True with probability `probability`.
    mutating func chance(_ probability: Double) -> Bool {
        if probability <= 0 { return false }
        if probability >= 1 { return true }
        return unit() < probability
    }

    /// A uniform duration in `[center - spread, center + spread]`, never negative.
    mutating func around(_ center: Nanoseconds, spread: Nanoseconds) -> Nanoseconds {
        guard spread > 0 else { return max(0, center) }
        let offset = Nanoseconds((unit() * 2 - 1) * Double(spread))
        return max(0, center + offset)
    }

    /// A uniform duration in `[low, high]`.
    mutating func between(_ low: Nanoseconds, _ high: Nanoseconds) -> Nanoseconds {
        guard high > low else { return low }
        return low + Nanoseconds(unit() * Double(high - low))
    }

    /// An exponentially distributed gap with the given mean (Poisson arrivals).
    mutating func exponential(mean: Double) -> Double {
        -log(1 - unit()) * mean
    }

    /// A seed for another stream, derived from this one.
    mutating func childSeed() -> UInt64 {
        next()
    }
}
