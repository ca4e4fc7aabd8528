/// A small, fast, seedable random number generator (xoshiro256**, seeded through SplitMix64).
///
/// Jitter must be reproducible in tests and cheap in production, so policies take an injected
/// `RandomNumberGenerator` instead of calling the system generator on the hot path. This generator is a
/// value type: copy it and both copies produce the same sequence.
public struct PseudoRandomGenerator: RandomNumberGenerator, Sendable, Hashable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    /// Creates a generator whose sequence is fully determined by `seed`.
    ///
    /// - Parameter seed: Any value; equal seeds give equal sequences.
    public init(seed: UInt64) {
        var splitMix = seed
        func next() -> UInt64 {
            splitMix &+= 0x9E37_79B9_7F4A_7C15
            var z = splitMix
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (next(), next(), next(), next())
    }

    /// Creates a generator seeded from the system's generator (for production defaults).
    public init() {
        var system = SystemRandomNumberGenerator()
        self.init(seed: system.next())
    }

    /// The next 64 random bits.
    @inlinable
    public mutating func next() -> UInt64 {
        nextValue()
    }

    @usableFromInline
    mutating func nextValue() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ value: UInt64, _ amount: UInt64) -> UInt64 {
        (value << amount) | (value >> (64 - amount))
    }

    /// Equal when both generators will produce the same sequence.
    public static func == (lhs: PseudoRandomGenerator, rhs: PseudoRandomGenerator) -> Bool {
        lhs.state == rhs.state
    }

    /// Hashes the generator's state.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(state.0)
        hasher.combine(state.1)
        hasher.combine(state.2)
        hasher.combine(state.3)
    }
}
