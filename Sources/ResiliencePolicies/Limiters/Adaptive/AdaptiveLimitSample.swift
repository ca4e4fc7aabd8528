/// One finished call, as an adaptive limit algorithm sees it: how long it took, how many calls were in flight
/// when it was admitted, and whether the backend dropped it (a timeout, an overload answer).
public struct AdaptiveLimitSample: Hashable, Sendable {
    /// The call's round trip, in seconds.
    public var roundTrip: Double
    /// Calls in flight when it was admitted, itself included.
    public var inFlight: Int
    /// Whether the backend dropped or refused it (a timeout, a `503`, a `429`): a sign of overload.
    public var dropped: Bool
    /// When it ended, in seconds on the limiter's clock.
    public var completedAt: Double

    /// Creates a sample.
    ///
    /// - Parameters:
    ///   - roundTrip: The call's round trip, in seconds.
    ///   - inFlight: Calls in flight when it was admitted, itself included.
    ///   - dropped: Whether the backend dropped or refused it. Default: `false`.
    ///   - completedAt: When it ended, in seconds on the limiter's clock. Default: `0`.
    public init(roundTrip: Double, inFlight: Int, dropped: Bool = false, completedAt: Double = 0) {
        self.roundTrip = roundTrip
        self.inFlight = inFlight
        self.dropped = dropped
        self.completedAt = completedAt
    }
}
