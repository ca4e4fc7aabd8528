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

    /// Refreshes were attempted too often and were stopped.
    public static func refreshLimitReached(limit: Int, window: Duration) -> AuthenticationFailure {
        AuthenticationFailure(
            FailureClassification(
                category: .authentication, code: .refreshLimitReached, isTransient: false, logLevel: .error,
                message: "stopped refreshing credentials: \(limit) refreshes within \(window)",
                requestWasNotSent: true))
    }

    /// `AUTH_001 session expired …`.
    public var description: String { "\(classification.code) \(classification.message ?? "")" }
}
