/// Proof that a limiter admitted a call; return it with ``RateLimiter/release(_:outcome:now:)``.
public struct RateLimitPermit: Hashable, Sendable {
    /// A limiter-specific identifier (a slot number, a generation); zero when the limiter needs none.
    public var token: UInt64
    /// When the call was admitted.
    public var admittedAt: ResilienceInstant

    /// Creates a permit.
    public init(token: UInt64 = 0, admittedAt: ResilienceInstant) {
        self.token = token
        self.admittedAt = admittedAt
    }
}
