/// A breaker's persistable state, with times expressed relative to the moment it was taken.
///
/// Relative times survive a restart on a monotonic clock: "open for 42 more seconds" means the same thing
/// in the next process. Policies put anything else they need (a cooldown multiplier, window counts) in
/// ``values``.
public struct BreakerSnapshot: Hashable, Sendable, Codable {
    /// The state.
    public var state: BreakerState
    /// Time left in the open state (zero unless open).
    public var remainingOpen: Duration
    /// Policy-specific numbers (e.g. `"multiplier": 4`, `"consecutiveFailures": 2`).
    public var values: [String: Double]

    /// Creates a snapshot.
    public init(state: BreakerState, remainingOpen: Duration = .zero, values: [String: Double] = [:]) {
        self.state = state
        self.remainingOpen = remainingOpen
        self.values = values
    }
}
