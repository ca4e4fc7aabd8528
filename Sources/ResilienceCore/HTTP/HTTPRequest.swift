import Foundation

/// One HTTP request, as a value.
public struct HTTPRequest: Hashable, Sendable, CustomStringConvertible {
    /// The method.
    public var method: HTTPMethod
    /// The absolute URL.
    public var url: URL
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body, if any.
    public var body: Data?
    /// Whether the request may be repeated; defaults from the method. Decorators set ``Idempotency/key``.
    public var idempotency: Idempotency

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - method: The method. Default: `.get`.
    ///   - url: The absolute URL.
    ///   - headers: The header fields. Default: `[:]`.
    ///   - body: The body, if any.
    ///   - idempotency: Whether the request may be repeated; defaults from the method. Decorators set
    ///     ``Idempotency/key``.
    public init(
        method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = [:], body: Data? = nil,
        idempotency: Idempotency? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.idempotency = idempotency ?? (method.isIdempotent ? .idempotent : .nonIdempotent)
    }

    /// `GET https://…`.
    public var description: String { "\(method) \(url.absoluteString)" }
}
