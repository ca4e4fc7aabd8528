/// Everything a policy or a presenter needs to know about one failure, in one value.
///
/// Produced by an ``ErrorClassifier`` from any `Error`. Policies decide on `category`, `isTransient` and
/// `retryAfter`; presenters on `category`, `code` and `message`; telemetry records all of it.
public struct FailureClassification: Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public var category: FailureCategory
    /// The stable code (e.g. `NET_002`).
    public var code: FailureCode
    /// The HTTP status, when the failure came from an HTTP response.
    public var httpStatus: Int?
    /// The server's hint for when to retry (`Retry-After` and friends), already converted to a duration.
    public var retryAfter: Duration?
    /// Whether trying again later may succeed.
    public var isTransient: Bool
    /// How loudly to log it.
    public var logLevel: LogLevel
    /// A human-readable message from the server or the failing component, for technical details.
    /// Presenters never show it verbatim as the main message.
    public var message: String? {
        get { messageSource.text }
        set { messageSource = .text(newValue) }
    }
    /// Where ``message`` comes from: its text, or a stage's error rendered only when the message is read.
    var messageSource: FailureMessage
    /// True when the failure proves the request never reached the server (connection refused, DNS failure,
    /// a local rejection), so even a non-idempotent request is safe to retry.
    public var requestWasNotSent: Bool

    /// Creates a classification. `isTransient` defaults from the category.
    ///
    /// - Parameters:
    ///   - category: The kind of failure.
    ///   - code: The stable code (e.g. `NET_002`).
    ///   - httpStatus: The HTTP status, when the failure came from an HTTP response.
    ///   - retryAfter: The server's hint for when to retry (`Retry-After` and friends), already converted to a
    ///     duration.
    ///   - isTransient: Whether trying again later may succeed.
    ///   - logLevel: How loudly to log it. Default: `.warning`.
    ///   - message: A human-readable message from the server or the failing component, for technical details.
    ///     Presenters never show it verbatim as the main message.
    ///   - requestWasNotSent: True when the failure proves the request never reached the server (connection refused,
    ///     DNS failure, a local rejection), so even a non-idempotent request is safe to retry. Default: `false`.
    public init(
        category: FailureCategory,
        code: FailureCode,
        httpStatus: Int? = nil,
        retryAfter: Duration? = nil,
        isTransient: Bool? = nil,
        logLevel: LogLevel = .warning,
        message: String? = nil,
        requestWasNotSent: Bool = false
    ) {
        self.category = category
        self.code = code
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
        self.isTransient = isTransient ?? FailureClassification.transientCategories.contains(category)
        self.logLevel = logLevel
        self.messageSource = .text(message)
        self.requestWasNotSent = requestWasNotSent
    }

    /// The categories that are transient unless a classifier says otherwise.
    public static let transientCategories: Set<FailureCategory> = [
        .transient, .timeout, .rateLimited, .serverError, .networkUnreachable,
    ]

    /// The caller's cancellation.
    public static let cancelled = FailureClassification(
        category: .cancelled, code: .cancelled, isTransient: false, logLevel: .debug)

    /// An error nobody recognised: not retried, logged as an error.
    public static let unknown = FailureClassification(
        category: .unknown, code: .unknown, isTransient: false, logLevel: .error)

    /// `category/code (status) …` for logs.
    public var description: String {
        var text = "\(category)/\(code)"
        if let httpStatus { text += " HTTP \(httpStatus)" }
        if let retryAfter { text += " retry-after \(retryAfter)" }
        if let message { text += ": \(message)" }
        return text
    }
}

/// A failure's message: its text, or the error whose description is the text, rendered only when read.
/// Stages classify every failure they see and most classifications are never printed, so the message of a
/// stage's own error (``ResilienceError``) costs no string until somebody reads it. Two messages are equal
/// when their texts are, whichever way they are kept.
struct FailureMessage: Hashable, Sendable {
    /// The text, when kept as text.
    private let storedText: String?
    /// The error whose description is the text, when kept as an error (the error as thrown, so keeping it
    /// copies nothing).
    private let describedError: (any Error)?

    /// The message `text`.
    static func text(_ text: String?) -> FailureMessage { FailureMessage(storedText: text, describedError: nil) }

    /// The description of `error`, rendered when read.
    static func description(of error: any Error) -> FailureMessage {
        FailureMessage(storedText: nil, describedError: error)
    }

    /// The message's text.
    var text: String? {
        if let describedError { return String(describing: describedError) }
        return storedText
    }

    static func == (lhs: FailureMessage, rhs: FailureMessage) -> Bool { lhs.text == rhs.text }

    func hash(into hasher: inout Hasher) { hasher.combine(text) }
}
