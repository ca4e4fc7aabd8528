import Foundation

/// Classifies ``HTTPStatusError`` (a response somebody rejected) from its status, headers and body together,
/// with the server's retry hint and message.
///
/// The base classification is Core's ``HTTPStatusTable`` read from the whole response
/// (``HTTPStatusTable/classification(of:)``): the status table with its reasons per status, a `401`/`403`
/// whose headers say the quota is spent read as rate-limited, and an in-progress `409` as transient.
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

    /// The classification of a rejected response: a response rule's, else an override, else
    /// ``HTTPStatusTable/classification(of:)``; plus retry hint and server message.
    ///
    /// - Parameter response: The rejected response.
    public func classification(of response: HTTPResponse) -> FailureClassification {
        var classification =
            responseRules.lazy.compactMap { $0(response) }.first ?? overrides[response.status]
            ?? HTTPStatusTable.classification(of: response)
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
}
