/// One row of a ``CategoryRetryPolicy``: how many attempts, which curve, how much jitter.
public struct CategoryRetryRule: Sendable, Hashable, CustomStringConvertible {
    /// The most attempts in total, the first included.
    public var maxAttempts: Int
    /// The delay curve.
    public var backoff: Backoff
    /// The randomness added to each delay.
    public var jitter: Jitter

    /// Creates a rule.
    ///
    /// - Parameters:
    ///   - maxAttempts: The most attempts in total, the first included.
    ///   - backoff: The delay curve.
    ///   - jitter: The randomness added to each delay.
    public init(maxAttempts: Int, backoff: Backoff, jitter: Jitter) {
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.jitter = jitter
    }

    /// Network failures: 3 attempts, 1 s ×2 capped at 10 s, ±20 %.
    public static let network = CategoryRetryRule(
        maxAttempts: 3, backoff: .exponential(base: .seconds(1), multiplier: 2, cap: .seconds(10)),
        jitter: .proportional(0.2))

    /// Rate limits: 2 attempts, 5 s ×2 capped at 60 s, ±30 %.
    public static let rateLimit = CategoryRetryRule(
        maxAttempts: 2, backoff: .exponential(base: .seconds(5), multiplier: 2, cap: .seconds(60)),
        jitter: .proportional(0.3))

    /// Server errors: 3 attempts, 2 s ×2 capped at 30 s, ±20 %.
    public static let serverError = CategoryRetryRule(
        maxAttempts: 3, backoff: .exponential(base: .seconds(2), multiplier: 2, cap: .seconds(30)),
        jitter: .proportional(0.2))

    /// Timeouts (408, 504): the network numbers with a linear curve (1, 2, 3 … s, cap 10 s).
    public static let timeout = CategoryRetryRule(
        maxAttempts: 3, backoff: .linear(base: .seconds(1), increment: .seconds(1), cap: .seconds(10)),
        jitter: .proportional(0.2))

    /// `3 × exponential(…) proportional(±20%)`.
    public var description: String { "\(maxAttempts) × \(backoff) \(jitter)" }
}
