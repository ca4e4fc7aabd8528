/// Why an ``AuthenticatingTransport`` could not authenticate a request.
public struct AuthenticationFailure: ClassifiedError, Hashable, Sendable, CustomStringConvertible {
    /// Always `authentication`, coded `AUTH_001` (session expired) or `AUTH_004` (refresh limit reached).
    public var classification: FailureClassification

    /// Creates a failure.
    ///
    /// - Parameter classification: How the failure is classified; the transport uses category
    ///   `authentication` with `AUTH_001` (session expired) or `AUTH_004` (refresh limit reached).
    public init(_ classification: FailureClassification) { self.classification = classification }

    /// The refresh failed: the session cannot be renewed and the user must sign in again.
    public static func sessionExpired(reason: String? = nil) -> AuthenticationFailure {
        var message = "session expired: the credential could not be refreshed"
        if let reason { message += " (\(reason))" }
        return AuthenticationFailure(
            FailureClassification(
                category: .authentication, code: .sessionExpired, isTransient: false, logLevel: .notice,
                message: message))
    }

    /// Refreshes were attempted too often and were stopped (`AUTH_004`).
    ///
    /// Whether the request reached the server depends on when the limit stopped it, and the classification
    /// says which:
    /// - before sending (`afterRejectionStatus` is `nil`: the credential had expired and needed a refresh), the
    ///   request was not sent: ``FailureClassification/requestWasNotSent`` is true and the message says so;
    /// - after the server refused the credential (`afterRejectionStatus` is that status, e.g. 401), the request
    ///   was sent and answered: ``FailureClassification/requestWasNotSent`` is false,
    ///   ``FailureClassification/httpStatus`` is the status and the message says the request was refused and not
    ///   sent again.
    ///
    /// - Parameters:
    ///   - limit: ``AuthenticationConfiguration/maximumRefreshes``.
    ///   - window: ``AuthenticationConfiguration/refreshWindow``.
    ///   - afterRejectionStatus: The status the server refused the request with, or `nil` when the request was
    ///     stopped before it was sent. Default: `nil`.
    public static func refreshLimitReached(
        limit: Int, window: Duration, afterRejectionStatus: Int? = nil
    ) -> AuthenticationFailure {
        let limited = "stopped refreshing credentials: \(limit) refreshes within \(window)"
        let message: String
        if let status = afterRejectionStatus {
            message =
                "\(limited); the request was sent, the server refused its credential (HTTP \(status)) "
                + "and it was not sent again"
        } else {
            message = "\(limited); the request was not sent"
        }
        return AuthenticationFailure(
            FailureClassification(
                category: .authentication, code: .refreshLimitReached, httpStatus: afterRejectionStatus,
                isTransient: false, logLevel: .error, message: message,
                requestWasNotSent: afterRejectionStatus == nil))
    }

    /// `AUTH_001 session expired …`.
    public var description: String { "\(classification.code) \(classification.message ?? "")" }
}
