import Foundation

/// A failure the transport layer detected itself (deadline, size cap, redirects, insecure URL, credentials) or
/// translated from a platform error through ``URLErrorClassifier``'s table.
///
/// It classifies itself (``ClassifiedError``), so every pipeline treats it the same on every platform. The
/// platform's own error code, if any, is kept in ``platformErrorCode`` for diagnostics.
public struct TransportError: ClassifiedError, Hashable, Sendable, CustomStringConvertible {
    /// How policies and presenters should treat it.
    public var classification: FailureClassification
    /// The URL involved, if known.
    public var url: URL?
    /// The platform's error code (`URLError.Code.rawValue`), when the failure came from URLSession.
    public var platformErrorCode: Int?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - classification: How policies and presenters should treat it.
    ///   - url: The URL involved, if known.
    ///   - platformErrorCode: The platform's error code (`URLError.Code.rawValue`), when the failure came from
    ///     URLSession.
    public init(_ classification: FailureClassification, url: URL? = nil, platformErrorCode: Int? = nil) {
        self.classification = classification
        self.url = url
        self.platformErrorCode = platformErrorCode
    }

    /// The stable code.
    public var code: FailureCode { classification.code }

    /// `NET_011 response-too-large: …`.
    public var description: String {
        var text = "\(classification.code) \(classification.category)"
        if let message = classification.message { text += ": \(message)" }
        if let platformErrorCode { text += " (platform code \(platformErrorCode))" }
        return text
    }

    /// The attempt's deadline passed before a complete response arrived; a `limit` of zero or less means it had
    /// passed before the request was sent: the message says so, and the error is marked
    /// ``FailureClassification/requestWasNotSent``, so a retry may send even a request that is not idempotent.
    public static func timedOut(after limit: Duration?, url: URL?) -> TransportError {
        let detail: String
        var notSent = false
        switch limit {
        case .some(let limit) where limit > .zero:
            detail = "no complete response within the attempt deadline (\(limit))"
        case .some:
            detail = "the attempt deadline had passed before the request was sent"
            notSent = true
        case nil: detail = "the attempt deadline passed"
        }
        return TransportError(
            FailureClassification(
                category: .timeout, code: .timedOut, message: detail, requestWasNotSent: notSent),
            url: url)
    }

    /// A streamed body went `limit` without a byte after its head arrived: the server or the path stalled, so
    /// the stream was ended. A transient ``FailureCategory/timeout`` with code ``FailureCode/timedOut``
    /// (`NET_002`), like the attempt's deadline: reconnecting may well succeed.
    /// - Parameters:
    ///   - limit: The idle timeout that passed without a byte.
    ///   - url: The stream's URL.
    public static func idleTimedOut(after limit: Duration, url: URL?) -> TransportError {
        TransportError(
            FailureClassification(
                category: .timeout, code: .timedOut, message: "no byte of the streamed body within \(limit)"),
            url: url)
    }

    /// The body grew past `limit` bytes (after decompression).
    public static func responseTooLarge(limit: Int, url: URL?) -> TransportError {
        TransportError(
            FailureClassification(
                category: .invalidResponse, code: .responseTooLarge, isTransient: false,
                message: "response body exceeded the \(limit)-byte limit"),
            url: url)
    }

    /// More redirects than allowed.
    public static func tooManyRedirects(limit: Int, url: URL?) -> TransportError {
        TransportError(
            FailureClassification(
                category: .invalidResponse, code: .tooManyRedirects, isTransient: false,
                message: "more than \(limit) redirects"),
            url: url)
    }

    /// A redirect led back to a URL already visited. The message names the URL without its query and
    /// `user:password@` (which may hold secrets: it is logged and exported); ``url`` keeps it whole.
    public static func redirectLoop(url: URL?) -> TransportError {
        TransportError(
            FailureClassification(
                category: .invalidResponse, code: .tooManyRedirects, isTransient: false,
                message: "redirect loop back to \(url.map(SecureTransport.redacted) ?? "a visited URL")"),
            url: url)
    }

    /// A plaintext request (or an https→http redirect) was blocked: marked not sent
    /// (``FailureClassification/requestWasNotSent``), as a blocked request is; a redirect hop refused by
    /// ``RedirectPolicy`` follows a request that was sent, and its error is not marked.
    public static func insecureTransport(url: URL?, reason: String) -> TransportError {
        TransportError(
            FailureClassification(
                category: .insecureTransport, code: .insecureTransportBlocked, isTransient: false, logLevel: .error,
                message: reason, requestWasNotSent: true),
            url: url)
    }

    /// A header field of the request cannot be sent as it is (``TransportExchange/validateHeaderFields(of:)``):
    /// the caller's invalid request (`clientError`, ``FailureCode/invalidFormat``), not transient and never sent,
    /// so no retry repeats it. The message names the field, never its value (which may be a credential).
    /// - Parameters:
    ///   - reason: Which field was refused and why.
    ///   - url: The request's URL.
    public static func invalidHeaderField(_ reason: String, url: URL?) -> TransportError {
        TransportError(
            FailureClassification(
                category: .clientError, code: .invalidFormat, isTransient: false, logLevel: .error, message: reason,
                requestWasNotSent: true),
            url: url)
    }

    /// The body ended before its declared length.
    public static func truncated(
        received: Int, expected: Int?, url: URL?, platformErrorCode: Int? = nil
    )
        -> TransportError
    {
        let detail = expected.map { "body ended after \(received) of \($0) bytes" } ?? "body ended early"
        return TransportError(
            FailureClassification(category: .transient, code: .truncatedResponse, message: detail), url: url,
            platformErrorCode: platformErrorCode)
    }
}
