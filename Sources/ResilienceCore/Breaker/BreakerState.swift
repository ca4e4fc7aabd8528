/// The three states of a circuit breaker, plus the manually forced ones.
public enum BreakerState: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Calls flow; failures are counted.
    case closed
    /// Calls are rejected until the open period ends.
    case open
    /// A limited number of probe calls test whether the dependency recovered.
    case halfOpen = "half-open"
    /// Manually isolated: every call is rejected until ``BreakerPolicy/reset(now:)``.
    case isolated

    /// The state's name.
    public var description: String { rawValue }
}
