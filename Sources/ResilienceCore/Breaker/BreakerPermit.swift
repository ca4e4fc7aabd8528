/// Proof that a breaker admitted a call; hand it back to ``BreakerPolicy/record(_:for:now:)``.
///
/// The generation lets a breaker ignore outcomes of calls admitted before a state change (a late success
/// from before a trip must not close the breaker). A probe permit must always be returned, even when the
/// call is cancelled or times out, so half-open can never get stuck.
public struct BreakerPermit: Hashable, Sendable {
    /// The breaker's state generation when the call was admitted.
    public var generation: UInt64
    /// True when the call is a half-open probe.
    public var isProbe: Bool
    /// When the call was admitted (for slow-call detection).
    public var admittedAt: ResilienceInstant

    /// Creates a permit.
    public init(generation: UInt64, isProbe: Bool, admittedAt: ResilienceInstant) {
        self.generation = generation
        self.isProbe = isProbe
        self.admittedAt = admittedAt
    }
}
