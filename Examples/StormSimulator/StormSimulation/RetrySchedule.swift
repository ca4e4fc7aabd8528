/// The backoff settings a scenario gives every backoff-based strategy (base, cap, attempts).
public struct RetrySchedule: Hashable, Sendable, CustomStringConvertible {
    /// The first retry's delay before jitter.
    public var base: Duration
    /// The largest delay.
    public var cap: Duration
    /// Attempts in total, the first included.
    public var maxAttempts: Int

    /// Creates a schedule.
    public init(base: Duration, cap: Duration, maxAttempts: Int) {
        self.base = base
        self.cap = cap
        self.maxAttempts = maxAttempts
    }

    /// `base 5 ms, cap 2 s, 100 attempts`.
    public var description: String {
        "base \(FixedFormat.milliseconds(base, decimals: 0)), cap \(FixedFormat.seconds(cap, decimals: 1)), "
            + "\(maxAttempts) attempts"
    }
}
