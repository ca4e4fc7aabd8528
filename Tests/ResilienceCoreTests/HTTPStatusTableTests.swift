import Foundation
import ResilienceCore
import Testing

@Suite("HTTPStatusTable: the one status table")
struct HTTPStatusTableTests {
    struct Row: Sendable, CustomStringConvertible {
        let status: Int
        let category: FailureCategory
        let code: FailureCode
        let isTransient: Bool
        let logLevel: LogLevel
        var description: String { "\(status)" }
    }

    /// Every status the table names, and a sample of each range it covers, with the row the table's
    /// documentation gives it.
    static let rows: [Row] = [
        Row(status: 408, category: .timeout, code: .timedOut, isTransient: true, logLevel: .warning),
        Row(status: 429, category: .rateLimited, code: .rateLimited, isTransient: true, logLevel: .notice),
        Row(status: 401, category: .authentication, code: .unauthorized, isTransient: false, logLevel: .warning),
        Row(status: 403, category: .authentication, code: .forbidden, isTransient: false, logLevel: .warning),
        Row(status: 404, category: .notFound, code: .http(404), isTransient: false, logLevel: .info),
        Row(status: 410, category: .notFound, code: .http(410), isTransient: false, logLevel: .info),
        Row(status: 409, category: .conflict, code: .http(409), isTransient: false, logLevel: .info),
        Row(status: 400, category: .clientError, code: .http(400), isTransient: false, logLevel: .error),
        Row(status: 422, category: .clientError, code: .http(422), isTransient: false, logLevel: .error),
        Row(status: 451, category: .clientError, code: .http(451), isTransient: false, logLevel: .error),
        Row(status: 499, category: .clientError, code: .http(499), isTransient: false, logLevel: .error),
        Row(status: 504, category: .timeout, code: .timedOut, isTransient: true, logLevel: .warning),
        Row(status: 501, category: .clientError, code: .http(501), isTransient: false, logLevel: .error),
        Row(status: 500, category: .serverError, code: .serverUnavailable, isTransient: true, logLevel: .warning),
        Row(status: 502, category: .serverError, code: .serverUnavailable, isTransient: true, logLevel: .warning),
        Row(status: 503, category: .serverError, code: .serverUnavailable, isTransient: true, logLevel: .warning),
        Row(status: 599, category: .serverError, code: .serverUnavailable, isTransient: true, logLevel: .warning),
        Row(status: 200, category: .invalidResponse, code: .invalidResponse, isTransient: false, logLevel: .error),
        Row(status: 304, category: .invalidResponse, code: .invalidResponse, isTransient: false, logLevel: .error),
        Row(status: 100, category: .invalidResponse, code: .invalidResponse, isTransient: false, logLevel: .error),
        Row(status: 600, category: .invalidResponse, code: .invalidResponse, isTransient: false, logLevel: .error),
        Row(status: -1, category: .invalidResponse, code: .invalidResponse, isTransient: false, logLevel: .error),
        Row(status: .max, category: .invalidResponse, code: .invalidResponse, isTransient: false, logLevel: .error),
    ]

    @Test("Each status reads as the table's documentation says", arguments: rows)
    func statusRow(_ row: Row) {
        let byStatus = HTTPStatusTable.classification(status: row.status)
        #expect(byStatus.category == row.category)
        #expect(byStatus.code == row.code)
        #expect(byStatus.isTransient == row.isTransient)
        #expect(byStatus.logLevel == row.logLevel)
        #expect(byStatus.httpStatus == row.status)
        #expect(byStatus.retryAfter == nil)
        #expect(byStatus.message == nil)
        // A plain response (no quota headers, no 409 signal) reads the same as its status.
        #expect(HTTPStatusTable.classification(of: HTTPResponse(status: row.status)) == byStatus)
    }

    @Test("A 401 or 403 whose headers say the quota is spent is rate-limited, not an authentication failure")
    func spentQuotaOnAuthenticationStatuses() {
        let spent: [HTTPHeaders] = [
            ["X-RateLimit-Remaining": "0"], ["RateLimit-Remaining": "0"], ["RateLimit": "limit=60, remaining=0"],
            ["Retry-After": "30"],
        ]
        for status in [401, 403] {
            for headers in spent {
                let classification = HTTPStatusTable.classification(of: HTTPResponse(status: status, headers: headers))
                #expect(classification.category == .rateLimited, "\(status) \(headers)")
                #expect(classification.code == .rateLimited)
                #expect(classification.isTransient)
                #expect(classification.httpStatus == status)
            }
            let quotaLeft = HTTPResponse(status: status, headers: ["X-RateLimit-Remaining": "12"])
            #expect(HTTPStatusTable.classification(of: quotaLeft).category == .authentication)
        }
        // The quota headers say nothing to other statuses.
        let notFound = HTTPResponse(status: 404, headers: ["X-RateLimit-Remaining": "0"])
        #expect(HTTPStatusTable.classification(of: notFound).category == .notFound)
    }

    @Test("A 409 that says the idempotency key is in use is transient; any other 409 is a conflict")
    func conflicts() {
        let inProgress = HTTPResponse(status: 409, body: Data(#"{"type":"idempotency-key-in-use"}"#.utf8))
        let classification = HTTPStatusTable.classification(of: inProgress)
        #expect(classification.category == .transient)
        #expect(classification.code == .http(409))
        #expect(classification.isTransient)
        let exists = HTTPResponse(status: 409, body: Data(#"{"code":"already_exists"}"#.utf8))
        #expect(HTTPStatusTable.classification(of: exists).category == .conflict)
        #expect(!HTTPStatusTable.classification(of: exists).isTransient)
    }

    @Test("As a classifier it reads HTTPStatusError and nothing else")
    func asClassifier() {
        let table = HTTPStatusTable()
        let rejected = HTTPStatusError(response: HTTPResponse(status: 504))
        #expect(table.classify(rejected) == HTTPStatusTable.classification(status: 504))
        struct Other: Error {}
        #expect(table.classify(Other()) == nil)
    }
}
