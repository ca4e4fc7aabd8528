/// Decides, after attempt *n* failed with classification *c*, whether to retry and after how long.
///
/// ## Contract
/// - **Pure.** No sleeping, no clock reads, no shared mutable state: the same input and the same random
///   generator state give the same decision. The retry stage does the waiting.
/// - **Randomness only from `random`.** Jitter must draw from the generator passed in, so tests and
///   simulations are reproducible.
/// - **Never retry** ``FailureCategory/cancelled`` or ``FailureCategory/circuitOpen``, nor a failure whose
///   ``FailureClassification/isTransient`` is false. Honour the ``Idempotency`` guard: a request that is not
///   safe to repeat is retried only when ``FailureClassification/requestWasNotSent`` is true.
/// - **Overflow-safe.** `attempt.number` may be 10,000; delays must stay finite and capped.
/// - Delays are never negative.
///
/// ResilienceTesting's `RetryPolicyConformance` checks these rules against your implementation.
public protocol RetryPolicy: Sendable {
    /// The decision after `attempt` failed, drawing any jitter from `random`.
    func decide<Random: RandomNumberGenerator>(
        _ attempt: RetryAttempt, using random: inout Random
    )
        -> RetryDecision

    /// A short description of the policy and its settings, for pipeline descriptions.
    var policyDescription: String { get }
}

extension RetryPolicy {
    /// The type's name.
    public var policyDescription: String { String(describing: Self.self) }
}
