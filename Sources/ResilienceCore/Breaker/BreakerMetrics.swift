/// A snapshot of a breaker's counters, for dashboards and health rules.
public struct BreakerMetrics: Hashable, Sendable, Codable {
    /// The current state.
    public var state: BreakerState
    /// Failures counted since the last success (or the failure count in the current window).
    public var consecutiveFailures: Int
    /// Successes since the last failure.
    public var consecutiveSuccesses: Int
    /// How many times the breaker has opened.
    public var totalOpens: Int
    /// How long the breaker has been open now (zero when not open).
    public var currentOpenDuration: Duration
    /// Time left until the breaker admits a probe (zero when not open).
    public var remainingOpenDuration: Duration

    /// Creates a snapshot.
    public init(
        state: BreakerState,
        consecutiveFailures: Int = 0,
        consecutiveSuccesses: Int = 0,
        totalOpens: Int = 0,
        currentOpenDuration: Duration = .zero,
        remainingOpenDuration: Duration = .zero
    ) {
        self.state = state
        self.consecutiveFailures = consecutiveFailures
        self.consecutiveSuccesses = consecutiveSuccesses
        self.totalOpens = totalOpens
        self.currentOpenDuration = currentOpenDuration
        self.remainingOpenDuration = remainingOpenDuration
    }
}
