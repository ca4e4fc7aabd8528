/// The facts a ``RetryPolicy`` decides on after an attempt failed.
public struct RetryAttempt: Sendable, Hashable {
    /// The 1-based number of the attempt that just failed.
    public var number: Int
    /// How it failed.
    public var failure: FailureClassification
    /// The delay chosen before this attempt, if it was a retry (decorrelated jitter builds on it).
    public var previousDelay: Duration?
    /// Whether the operation may be repeated.
    public var idempotency: Idempotency
    /// Time since the first attempt started.
    public var elapsed: Duration

    /// Creates the input for one decision.
    public init(
        number: Int,
        failure: FailureClassification,
        previousDelay: Duration? = nil,
        idempotency: Idempotency = .idempotent,
        elapsed: Duration = .zero
    ) {
        self.number = number
        self.failure = failure
        self.previousDelay = previousDelay
        self.idempotency = idempotency
        self.elapsed = elapsed
    }
}
