import Foundation

/// Classifies ``HTTPStatusError`` (a response somebody rejected) from its status, headers and body together,
/// with the server's retry hint and message.
///
/// The whole response is read, not only the status:
/// - a `403` (or `401`) that says the quota is spent (`X-RateLimit-Remaining: 0`, `RateLimit-Remaining: 0`,
///   `RateLimit: "default";r=0`, or a `Retry-After`) is **rate-limited** (`NET_004`, transient, with the
///   reset as its hint), as GitHub answers; it is not an authentication failure;
/// - a `409` that says a request with the same `Idempotency-Key` is still in progress
///   (Core's ``IdempotencyConflict``) is **transient**: retry later with the same key;
/// - otherwise the status decides, by this table:
///
/// | status | category | transient |
/// |---|---|---|
/// | 408, 504 | timeout | yes |
/// | 429 | rateLimited | yes |
/// | 5xx except 501 | serverError | yes |
/// | 401, 403 | authentication | no |
/// | 404, 410 | notFound | no |
/// | 409 | conflict | no |
/// | 400, 422, 501, other 4xx | clientError | no |
/// | anything else | invalidResponse | no |
///
/// Integrators adjust it at two levels: ``responseRules`` see the whole response (status, headers, body) and
/// win when they return a classification; ``overrides`` replace a status's base classification. Hint and
/// message are still added to either.
///
/// ```swift
/// let classifier = HTTPStatusClassifier(responseRules: [{ response in
///     response.status == 400 && response.headers["X-Reason"] == "maintenance"
///         ? FailureClassification(category: .serverError, code: .serverUnavailable) : nil
/// }])
/// ```
public struct HTTPStatusClassifier: ErrorClassifier {
    /// A rule that sees the whole rejected response and returns its classification, or nil to pass.
    public typealias ResponseRule = @Sendable (HTTPResponse) -> FailureClassification?

    /// Rules over the whole response, asked in order before anything else.
    public var responseRules: [ResponseRule]
    /// Per-status replacements of the base classification.
    public var overrides: [Int: FailureClassification]
    /// Reads `Retry-After` and the rate-limit hints.
    public var hintParser: RetryHintParser
    /// The wall clock, used only to resolve an HTTP-date hint when the response has no `Date` header.
    /// Defaults to the system clock (`Date.init`); inject a fixed one in tests.
    public var wallClock: @Sendable () -> Date

    /// Creates a classifier.
    /// - Parameters:
    ///   - responseRules: rules over the whole response, asked first, in order.
    ///   - overrides: per-status replacements of the base classification.
    ///   - hintParser: reads `Retry-After` and the rate-limit hints.
    ///   - wallClock: the wall clock for HTTP-date hints without a `Date` header.
    public init(
        responseRules: [ResponseRule] = [], overrides: [Int: FailureClassification] = [:],
        hintParser: RetryHintParser = RetryHintParser(), wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.responseRules = responseRules
        self.overrides = overrides
        self.hintParser = hintParser
        self.wallClock = wallClock
    }

    /// Classifies an ``HTTPStatusError``; nil for anything else.
    public func classify(_ error: any Error) -> FailureClassification? {
        guard let statusError = error as? HTTPStatusError else { return nil }
        return classification(of: statusError.response)
    }

    /// The classification of a rejected response: a response rule's, else an override, else the built-in
    /// reading of status, headers and body; plus retry hint and server message.
    public func classification(of response: HTTPResponse) -> FailureClassification {
        var classification =
            responseRules.lazy.compactMap { $0(response) }.first ?? overrides[response.status]
            ?? Self.baseClassification(of: response)
        classification.httpStatus = response.status
        if classification.retryAfter == nil {
            classification.retryAfter = hintParser.retryDelay(from: response.headers, now: wallClock())
        }
        if classification.message == nil {
            let details = ServerErrorDetails.parse(body: response.body, headers: response.headers)
            classification.message = details.summary ?? "HTTP \(response.status)"
        }
        return classification
    }

    /// The built-in reading of status, headers and body (the rules above), without hint or message.
    public static func baseClassification(of response: HTTPResponse) -> FailureClassification {
        switch response.status {
        case 401 where quotaIsSpent(response.headers), 403 where quotaIsSpent(response.headers):
            return FailureClassification(
                category: .rateLimited, code: .rateLimited, httpStatus: response.status, logLevel: .notice)
        case 409 where IdempotencyConflict.meaning(of: response) == .requestInProgress:
            return FailureClassification(
                category: .transient, code: .http(409), httpStatus: 409, isTransient: true, logLevel: .notice)
        default:
            return baseClassification(status: response.status)
        }
    }

    /// Whether the headers say the client's quota is spent: a remaining count of zero in any of the common
    /// rate-limit fields, or a `Retry-After`.
    public static func quotaIsSpent(_ headers: HTTPHeaders) -> Bool {
        if headers.contains("Retry-After") { return true }
        if let quota = ServerQuota(headers: headers, now: Date()), quota.remaining == 0 { return true }
        return false
    }

    /// The status table above, without hint or message.
    public static func baseClassification(status: Int) -> FailureClassification {
        func make(
            _ category: FailureCategory, _ code: FailureCode, level: LogLevel = .warning
        )
            -> FailureClassification
        {
            FailureClassification(category: category, code: code, httpStatus: status, logLevel: level)
        }
        switch status {
        case 408, 504: return make(.timeout, .timedOut)
        case 429: return make(.rateLimited, .rateLimited, level: .notice)
        case 501: return make(.clientError, .http(501), level: .error)
        case 500...599: return make(.serverError, .serverUnavailable)
        case 401: return make(.authentication, .unauthorized)
        case 403: return make(.authentication, .forbidden)
        case 404, 410: return make(.notFound, .http(status), level: .info)
        case 409: return make(.conflict, .http(409), level: .info)
        case 400...499: return make(.clientError, .http(status), level: .error)
        default: return make(.invalidResponse, .invalidResponse, level: .error)
        }
    }
}
