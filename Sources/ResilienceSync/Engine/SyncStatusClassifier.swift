import ResilienceCore

/// The engine's last-resort classifier for responses nobody else recognised, by status alone: 429 rate
/// limited, 409 conflict (transient when ``IdempotencyConflict`` reads it as a request still in progress),
/// 408 timeout, 5xx server error, other 4xx client error.
public struct SyncStatusClassifier: ErrorClassifier {
    /// Creates the classifier.
    public init() {}

    /// Classifies an ``HTTPStatusError``; `nil` for anything else.
    public func classify(_ error: any Error) -> FailureClassification? {
        guard let statusError = error as? HTTPStatusError else { return nil }
        let status = statusError.status
        switch status {
        case 429: return FailureClassification(category: .rateLimited, code: .rateLimited, httpStatus: status)
        case 409:
            let inProgress = IdempotencyConflict.meaning(of: statusError.response) == .requestInProgress
            return FailureClassification(
                category: .conflict, code: .http(status), httpStatus: status, isTransient: inProgress)
        case 408: return FailureClassification(category: .timeout, code: .timedOut, httpStatus: status)
        case 500...599:
            return FailureClassification(category: .serverError, code: .serverUnavailable, httpStatus: status)
        default:
            return FailureClassification(category: .clientError, code: .http(status), httpStatus: status)
        }
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
