/// What happened to an admitted call.
public enum BreakerOutcome: Hashable, Sendable {
    /// It succeeded.
    case success
    /// It failed; the breaker's own predicate decides whether this failure counts.
    case failure(FailureClassification)
    /// It was cancelled (or otherwise abandoned): release the permit without counting anything.
    case cancelled
}
