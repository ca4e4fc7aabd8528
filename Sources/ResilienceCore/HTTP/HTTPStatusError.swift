import Foundation

/// A response whose status the caller did not accept, thrown so a classifier can classify it.
///
/// Transports return every response; whoever validates it (a source, a client) throws this for statuses it
/// does not accept. HTTP classifiers (ResilienceTransport) read its status, headers and body to classify
/// it, parse `Retry-After`, and extract the server's message.
public struct HTTPStatusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The rejected response (its body is capped at ``maximumRetainedBody`` bytes).
    public var response: HTTPResponse
    /// The request that got it, if known.
    public var request: HTTPRequest?

    /// How many body bytes the error keeps: 16 MB, above a transport's response cap (10 MB by default), so
    /// the message of a large error document (a problem+json body of any size the transport accepted) can
    /// still be extracted. Classifiers keep the displayed text bounded; larger bodies are cut.
    public static let maximumRetainedBody = 16 * 1024 * 1024

    /// Creates an error, truncating a large body.
    ///
    /// - Parameters:
    ///   - response: The rejected response (its body is capped at ``maximumRetainedBody`` bytes).
    ///   - request: The request that got it, if known.
    public init(response: HTTPResponse, request: HTTPRequest? = nil) {
        var kept = response
        if kept.body.count > Self.maximumRetainedBody {
            kept.body = Data(kept.body.prefix(Self.maximumRetainedBody))
        }
        self.response = kept
        self.request = request
    }

    /// The status code.
    public var status: Int { response.status }

    /// `HTTP 503 for GET https://…`.
    public var description: String {
        if let request { return "HTTP \(status) for \(request)" }
        return "HTTP \(status)"
    }
}
