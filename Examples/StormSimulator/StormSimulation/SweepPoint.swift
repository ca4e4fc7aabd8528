/// One strategy at one failure probability in scenario 2, with the theoretical bounds.
public struct SweepPoint: Hashable, Sendable {
    /// The strategy's name.
    public var strategy: String
    /// The failure probability.
    public var p: Double
    /// The strategy's maximum attempts (n).
    public var maxAttempts: Int
    /// Measured success rate.
    public var successRate: Double
    /// Measured load (attempts ÷ logical requests).
    public var load: Double

    /// Creates a point.
    public init(strategy: String, p: Double, maxAttempts: Int, successRate: Double, load: Double) {
        self.strategy = strategy
        self.p = p
        self.maxAttempts = maxAttempts
        self.successRate = successRate
        self.load = load
    }

    /// The success bound 1 − pⁿ.
    public var successBound: Double { TheoreticalBounds.success(p: p, attempts: maxAttempts) }
    /// The load bound (1 − pⁿ)/(1 − p).
    public var loadBound: Double { TheoreticalBounds.load(p: p, attempts: maxAttempts) }
}
