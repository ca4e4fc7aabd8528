/// A thread-safe random source shared by the stages of a pipeline.
///
/// Retry stages draw jitter from it only when a retry is scheduled, never on the success path. Seed it in
/// tests for reproducible schedules.
public final class SharedRandomSource: Sendable {
    private let generator: LockedState<PseudoRandomGenerator>

    /// Creates a source with a fixed seed (reproducible) or, without one, seeded from the system.
    ///
    /// - Parameter seed: A fixed seed for reproducible jitter (tests, simulations); `nil` seeds from the system
    ///   generator. Default: `nil`.
    public init(seed: UInt64? = nil) {
        generator = LockedState(initialState: seed.map(PseudoRandomGenerator.init(seed:)) ?? PseudoRandomGenerator())
    }

    /// Splits off an independent generator (for one decision or one execution).
    public func makeGenerator() -> PseudoRandomGenerator {
        PseudoRandomGenerator(seed: generator.withLock { $0.next() })
    }

    /// A uniformly distributed value in `0..<1`.
    public func nextUnit() -> Double {
        var split = makeGenerator()
        return Double.random(in: 0..<1, using: &split)
    }
}
