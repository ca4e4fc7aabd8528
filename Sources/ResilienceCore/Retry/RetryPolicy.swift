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
    ///
    /// - Parameters:
    ///   - number: The 1-based number of the attempt that just failed.
    ///   - failure: How it failed.
    ///   - previousDelay: The delay chosen before this attempt, if it was a retry (decorrelated jitter builds on it).
    ///   - idempotency: Whether the operation may be repeated. Default: `.idempotent`.
    ///   - elapsed: Time since the first attempt started. Default: `.zero`.
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

/// A ``RetryPolicy``'s answer: wait and retry, or stop.
public struct RetryDecision: Sendable, Hashable, CustomStringConvertible {
    /// Why the policy stopped.
    public struct StopReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The identifier.
        public let rawValue: String
        /// Creates a reason.
        ///
        /// - Parameter rawValue: The identifier, in kebab-case like the predefined reasons (`"attempts-exhausted"`);
        ///   used in telemetry.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// The failure is not transient (4xx, invalid response …).
        public static let notRetryable = StopReason(rawValue: "not-retryable")
        /// The caller cancelled.
        public static let cancelled = StopReason(rawValue: "cancelled")
        /// A circuit breaker rejected the call.
        public static let circuitOpen = StopReason(rawValue: "circuit-open")
        /// The maximum number of attempts was reached.
        public static let attemptsExhausted = StopReason(rawValue: "attempts-exhausted")
        /// A non-idempotent request without a key may already have reached the server.
        public static let notIdempotent = StopReason(rawValue: "not-idempotent")
        /// The server's retry hint exceeds the configured maximum.
        public static let retryAfterTooLong = StopReason(rawValue: "retry-after-too-long")
        /// The total time allowed for retrying is spent.
        public static let timeExhausted = StopReason(rawValue: "time-exhausted")
    }

    /// Retry after ``delay``; `nil` when the policy stops.
    public var delay: Duration?
    /// Whether the retry uses up one of the allowed attempts (`false` when the wait came from the server's
    /// hint and the policy is configured not to count those).
    public var countsAsAttempt: Bool
    /// Why the policy stopped; `nil` when it retries.
    public var stopReason: StopReason?
    /// Where the delay came from, for telemetry (`"backoff"`, `"retry-after"`).
    public var source: String
    /// The backoff's delay before jitter, when the policy drew ``delay`` at random below it; `nil` otherwise.
    ///
    /// A retry that a budget refuses may wait this long for evidence that the server answers (see
    /// `RetryBudget`): jitter spreads the retries of many clients, but a refused retry's chance to see a
    /// later call succeed should not depend on how short its draw was.
    public var unjitteredDelay: Duration?

    /// Retry after `delay`.
    ///
    /// - Parameters:
    ///   - delay: How long to wait before the retry.
    ///   - countsAsAttempt: Whether the retry uses up one of the allowed attempts. Default: `true`.
    ///   - source: Where the delay came from, for telemetry. Default: `"backoff"`.
    ///   - unjitteredDelay: The backoff's delay before jitter, when `delay` was drawn at random below it.
    ///     Default: `nil`.
    public static func retry(
        after delay: Duration, countsAsAttempt: Bool = true, source: String = "backoff",
        unjitteredDelay: Duration? = nil
    )
        -> RetryDecision
    {
        RetryDecision(
            delay: delay, countsAsAttempt: countsAsAttempt, stopReason: nil, source: source,
            unjitteredDelay: unjitteredDelay)
    }

    /// Stop retrying.
    public static func stop(_ reason: StopReason) -> RetryDecision {
        RetryDecision(delay: nil, countsAsAttempt: true, stopReason: reason, source: "", unjitteredDelay: nil)
    }

    /// True when the policy asks for a retry.
    public var shouldRetry: Bool { delay != nil }

    /// `retry after …` or `stop (reason)`.
    public var description: String {
        if let delay { return "retry after \(delay) (\(source))" }
        return "stop (\(stopReason?.rawValue ?? "?"))"
    }
}
