import ResilienceCore

/// A failure that classifies itself, for tests: throw it from a scripted operation, source or transport to
/// drive a policy down a chosen path without a classifier.
///
/// ```swift
/// let source = ScriptedSource<String>(id: "a", steps: [.failure(TestFailure.rateLimited(after: .seconds(2)))])
/// ```
public struct TestFailure: ClassifiedError, Hashable, Sendable, CustomStringConvertible {
    /// How policies and presenters treat this failure.
    public var classification: FailureClassification

    /// Creates a failure with a full classification.
    ///
    /// - Parameter classification: The classification the failure reports.
    public init(classification: FailureClassification) { self.classification = classification }

    /// Creates a failure of `category`, with the code `TEST_<category>`.
    ///
    /// - Parameters:
    ///   - category: The failure's category; transience follows the category's default.
    ///   - httpStatus: The HTTP status the failure stands for, if any.
    ///   - retryAfter: The server's retry hint, if any.
    public init(category: FailureCategory = .serverError, httpStatus: Int? = nil, retryAfter: Duration? = nil) {
        classification = FailureClassification(
            category: category, code: FailureCode("TEST_\(category)"), httpStatus: httpStatus,
            retryAfter: retryAfter)
    }

    /// A 503 from the server (transient).
    public static let serverError = TestFailure(
        classification: FailureClassification(category: .serverError, code: "HTTP_503", httpStatus: 503))
    /// A 404 (permanent).
    public static let notFound = TestFailure(
        classification: FailureClassification(category: .notFound, code: "HTTP_404", httpStatus: 404))
    /// No network; the request provably never left the device.
    public static let unreachable = TestFailure(
        classification: FailureClassification(
            category: .networkUnreachable, code: .noConnection, requestWasNotSent: true))
    /// A connection reset (transient).
    public static let connectionReset = TestFailure(
        classification: FailureClassification(category: .transient, code: .connectionReset))
    /// A request that timed out (transient).
    public static let timeout = TestFailure(
        classification: FailureClassification(category: .timeout, code: .timedOut))

    /// A 429 with the server's retry hint `hint`.
    ///
    /// - Parameter hint: The `Retry-After` the server sent, if any.
    public static func rateLimited(after hint: Duration?) -> TestFailure {
        TestFailure(
            classification: FailureClassification(
                category: .rateLimited, code: .rateLimited, httpStatus: 429, retryAfter: hint))
    }

    /// `TestFailure(CODE, category)`.
    public var description: String { "TestFailure(\(classification.code), \(classification.category))" }
}
