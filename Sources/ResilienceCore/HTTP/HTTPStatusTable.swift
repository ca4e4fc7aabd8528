import Foundation

/// The one HTTP status table of ResilienceKit: what a rejected response means, by status (and, for 401, 403
/// and 409, by what the response says). The transport's `HTTPStatusClassifier`, the sources (through
/// ``HTTPStatusError``) and the sync engine's `SyncStatusClassifier` all read it, so the same response is the
/// same failure in a fetch and in a sync pass.
///
/// | status | category | code | transient | log level |
/// |---|---|---|---|---|
/// | 408 | timeout | `NET_002` | yes | warning |
/// | 429 | rateLimited | `NET_004` | yes | notice |
/// | 401 | authentication | `AUTH_002` | no | warning |
/// | 403 | authentication | `AUTH_003` | no | warning |
/// | 404, 410 | notFound | `HTTP_404`, `HTTP_410` | no | info |
/// | 409 | conflict | `HTTP_409` | no | info |
/// | 400, 422, other 4xx | clientError | `HTTP_<status>` | no | error |
/// | 504 | timeout | `NET_002` | yes | warning |
/// | 501 | clientError | `HTTP_501` | no | error |
/// | other 5xx (500, 502, 503 …) | serverError | `NET_014` | yes | warning |
/// | anything else (1xx, 2xx, 3xx, out of range) | invalidResponse | `NET_003` | no | error |
///
/// Why each status reads as it does (RFC 9110 section 15, and the requirement seeds):
///
/// - **408 Request Timeout** (§15.5.9): the server closed an idle connection; the request may be repeated.
///   A timeout, retried with the timeout rule (the seeds: "YES, LINEAR").
/// - **429 Too Many Requests** (RFC 6585 §4): the client sent too much; it should wait (`Retry-After`) and
///   try again. Rate-limited, transient.
/// - **401 Unauthorized** (§15.5.2): the request lacks valid credentials; sending the same request again
///   cannot succeed until the credentials change (a token refresh, a sign-in). Authentication, not
///   transient (the seeds: "Auth failed, NO"; refresh on 401).
/// - **403 Forbidden** (§15.5.4): the server understood and refuses; credentials, if given, are insufficient,
///   and "the client SHOULD NOT automatically repeat the request with the same credentials".
///   Authentication, not transient.
/// - **404 Not Found** (§15.5.5) and **410 Gone** (§15.5.11): no representation for the target; 410 says so
///   permanently, and 404 does not say the absence is temporary. Not found, not transient; a source may
///   read it as an empty result (the seeds: "Empty array (good!)").
/// - **409 Conflict** (§15.5.10): the request conflicts with the resource's current state; repeating it
///   unchanged conflicts again. Conflict, not transient.
/// - **Other 4xx** (§15.5: "the client seems to have erred"), 400 and 422 among them: the request is wrong;
///   repeating it unchanged fails the same way. Client error, not transient.
/// - **504 Gateway Timeout** (§15.6.5): a gateway got no timely answer from upstream, the same failure as
///   our own timeout one hop further; transient. Timeout (the seeds: "504 Gateway Timeout: Timeout, YES,
///   LINEAR").
/// - **501 Not Implemented** (§15.6.2): the server does not support what the request asks (a method it does
///   not recognise); the response is heuristically cacheable: the answer does not change by waiting. Not
///   transient, and a client error: the request asks for something this server never does (the seeds:
///   "500-599 Server Errors (except 501 Not Implemented)").
/// - **Other 5xx** (§15.6: "the server is aware that it has erred or is incapable"): 500, 502, 503 and the
///   rest may succeed later. Server error, transient (the seeds: "YES, EXPONENTIAL").
/// - **Anything else** thrown as a rejection (a 1xx, 2xx or 3xx the caller did not accept, or a number
///   outside 100–599): the response is not one the caller can use. Invalid response, not transient.
///
/// Read from the whole response (``classification(of:)``), two statuses say more than their number:
/// - a `401` or `403` whose headers say the quota is spent (``quotaIsSpent(_:)``) is **rate-limited**
///   (`NET_004`, transient), as GitHub answers: the client is over its limit, not unauthenticated;
/// - a `409` that says a request with the same `Idempotency-Key` is still in progress
///   (``IdempotencyConflict/requestInProgress``) is **transient** (category ``FailureCategory/transient``):
///   retry later with the same key.
///
/// Classifiers add what the table leaves out (the server's retry hint and message, an integrator's
/// overrides); the sync engine overlays its own reading of 409 (`SyncStatusClassifier`). As an
/// ``ErrorClassifier`` the table classifies an ``HTTPStatusError`` by ``classification(of:)`` and nothing
/// else.
public struct HTTPStatusTable: ErrorClassifier {
    /// Creates the table as a classifier of ``HTTPStatusError``.
    public init() {}

    /// Classifies an ``HTTPStatusError`` by ``classification(of:)``; `nil` for anything else.
    public func classify(_ error: any Error) -> FailureClassification? {
        guard let statusError = error as? HTTPStatusError else { return nil }
        return Self.classification(of: statusError.response)
    }

    /// The table's reading of a whole rejected response: a spent quota on 401 or 403 is rate-limited, an
    /// in-progress 409 is transient, and otherwise the status decides (``classification(status:)``). No retry
    /// hint and no message: classifiers add those.
    ///
    /// - Parameter response: The rejected response.
    public static func classification(of response: HTTPResponse) -> FailureClassification {
        switch response.status {
        case 401 where quotaIsSpent(response.headers), 403 where quotaIsSpent(response.headers):
            return FailureClassification(
                category: .rateLimited, code: .rateLimited, httpStatus: response.status, logLevel: .notice)
        case 409 where IdempotencyConflict.meaning(of: response) == .requestInProgress:
            return FailureClassification(
                category: .transient, code: .http(409), httpStatus: 409, isTransient: true, logLevel: .notice)
        default:
            return classification(status: response.status)
        }
    }

    /// Whether the headers say the client's quota is spent: a remaining count of zero in any of the common
    /// rate-limit fields (`X-RateLimit-Remaining`, `RateLimit-Remaining`, `RateLimit: "default";r=0`), or a
    /// `Retry-After`.
    ///
    /// - Parameter headers: The response's headers.
    public static func quotaIsSpent(_ headers: HTTPHeaders) -> Bool {
        if headers.contains("Retry-After") { return true }
        if let quota = ServerQuota(headers: headers, now: Date()), quota.remaining == 0 { return true }
        return false
    }

    /// The table above by status alone, without hint or message.
    ///
    /// - Parameter status: The response's status code; any integer (numbers outside 100–599 are invalid
    ///   responses).
    public static func classification(status: Int) -> FailureClassification {
        func row(_ category: FailureCategory, _ code: FailureCode, _ level: LogLevel) -> FailureClassification {
            FailureClassification(category: category, code: code, httpStatus: status, logLevel: level)
        }
        switch status {
        case 408, 504: return row(.timeout, .timedOut, .warning)
        case 429: return row(.rateLimited, .rateLimited, .notice)
        case 401: return row(.authentication, .unauthorized, .warning)
        case 403: return row(.authentication, .forbidden, .warning)
        case 404, 410: return row(.notFound, .http(status), .info)
        case 409: return row(.conflict, .http(409), .info)
        case 400...499: return row(.clientError, .http(status), .error)
        case 501: return row(.clientError, .http(501), .error)
        case 500...599: return row(.serverError, .serverUnavailable, .warning)
        default: return row(.invalidResponse, .invalidResponse, .error)
        }
    }
}
