import Foundation

/// Classifies ``HTTPStatusError`` (a response somebody rejected) by its status, with the server's retry hint
/// and message.
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
/// ``overrides`` replace a status's base classification for one source (hint and message are still added).
public struct HTTPStatusClassifier: ErrorClassifier {
    /// Per-status replacements of the base classification.
    public var overrides: [Int: FailureClassification]
    /// Reads `Retry-After` and the rate-limit hints.
    public var hintParser: RetryHintParser
    /// The wall clock, used only to resolve an HTTP-date hint when the response has no `Date` header.
    /// Defaults to the system clock (`Date.init`); inject a fixed one in tests.
    public var wallClock: @Sendable () -> Date

    /// Creates a classifier.
    public init(
        overrides: [Int: FailureClassification] = [:], hintParser: RetryHintParser = RetryHintParser(),
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.overrides = overrides
        self.hintParser = hintParser
        self.wallClock = wallClock
    }

    /// Classifies an ``HTTPStatusError``; nil for anything else.
    public func classify(_ error: any Error) -> FailureClassification? {
        guard let statusError = error as? HTTPStatusError else { return nil }
        return classification(of: statusError.response)
    }

    /// The classification of a rejected response: base (or override), plus retry hint and server message.
    public func classification(of response: HTTPResponse) -> FailureClassification {
        var classification = overrides[response.status] ?? Self.baseClassification(status: response.status)
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

    /// The table above, without hint or message.
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
