/// Decides which failures a circuit breaker counts against the dependency.
///
/// Cancellation never counts, whatever the predicate says. Failures that do not count are treated as
/// evidence that the dependency answered (a 404 or a 422 proves the server is up).
public struct BreakerFailurePredicate: Sendable {
    private let decide: @Sendable (FailureClassification) -> Bool

    /// Creates a predicate from a closure.
    ///
    /// - Parameter decide: Returns `true` when a failure with this classification counts toward opening the breaker;
    ///   called synchronously on the hot path, so keep it cheap.
    public init(_ decide: @escaping @Sendable (FailureClassification) -> Bool) {
        self.decide = decide
    }

    /// Whether `classification` counts as a failure (always `false` for cancellation).
    @inlinable
    public func counts(_ classification: FailureClassification) -> Bool {
        if classification.category == .cancelled { return false }
        return evaluate(classification)
    }

    @usableFromInline
    func evaluate(_ classification: FailureClassification) -> Bool {
        decide(classification)
    }

    /// Counts failures whose category is one of `categories`.
    public static func categories(_ categories: Set<FailureCategory>) -> BreakerFailurePredicate {
        BreakerFailurePredicate { categories.contains($0.category) }
    }

    /// Transient, timeout, server, network and rate-limited failures; never client errors or cancellation.
    public static let standard = BreakerFailurePredicate.categories([
        .transient, .timeout, .serverError, .networkUnreachable, .rateLimited,
    ])

    /// Only the server's "slow down" answers: category ``FailureCategory/rateLimited`` or HTTP 429.
    public static let rateLimitedOnly = BreakerFailurePredicate {
        $0.category == .rateLimited || $0.httpStatus == 429
    }

    /// Every failure except cancellation.
    public static let allFailures = BreakerFailurePredicate { _ in true }
}
