import ResilienceCore

/// The engine's last-resort classifier for responses nobody else recognised: Core's ``HTTPStatusTable`` with
/// the sync engine's overlay on top. The overlay consults the table and overrides one status only; every
/// other status, 429 included, is the table's.
///
/// The overlay:
/// - **409 Conflict** is always ``FailureCategory/conflict`` (`HTTP_409`), transient only when
///   ``IdempotencyConflict`` reads it as a request with the same key still in progress. The table reads an
///   in-progress 409 as ``FailureCategory/transient``, which is right for a fetch (retry with the same key);
///   the engine settles every 409 by its own rules (a confirmed duplicate is applied, an in-progress one waits
///   for the next pass, an ambiguous one is a failed attempt), and the pipeline's stages see one category for
///   all of them.
///
/// What the table already gives the engine, and the overlay keeps:
/// - **429 Too Many Requests** is ``FailureCategory/rateLimited`` (`NET_004`), as is a 401 or 403 whose
///   headers say the quota is spent: the engine counts it toward its rate-limit counter and never as a
///   mutation's attempt, and the rate-limit breaker learns from it.
public struct SyncStatusClassifier: ErrorClassifier {
    /// Creates the classifier.
    public init() {}

    /// Classifies an ``HTTPStatusError`` by ``classification(of:)``; `nil` for anything else.
    public func classify(_ error: any Error) -> FailureClassification? {
        guard let statusError = error as? HTTPStatusError else { return nil }
        return Self.classification(of: statusError.response)
    }

    /// The table's reading of `response` (``HTTPStatusTable/classification(of:)``) with the overlay's 409 rule.
    ///
    /// - Parameter response: The rejected response.
    public static func classification(of response: HTTPResponse) -> FailureClassification {
        let table = HTTPStatusTable.classification(of: response)
        guard response.status == 409 else { return table }
        let inProgress = IdempotencyConflict.meaning(of: response) == .requestInProgress
        return FailureClassification(
            category: .conflict, code: .http(409), httpStatus: 409, isTransient: inProgress,
            logLevel: table.logLevel)
    }
}

/// Asks `primary`, and `fallback` when `primary` does not know the error (`nil` or ``FailureCategory/unknown``,
/// which a ``CompositeErrorClassifier`` returns for everything it does not recognise).
struct StatusFallbackClassifier: ErrorClassifier {
    let primary: any ErrorClassifier
    let fallback: any ErrorClassifier

    func classify(_ error: any Error) -> FailureClassification? {
        let first = primary.classify(error)
        if let first, first.category != .unknown { return first }
        return fallback.classify(error) ?? first
    }
}
